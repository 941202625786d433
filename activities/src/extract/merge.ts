/**
 * Merging what the model extracted from each page of an extract into one answer, without a
 * model wherever the pages agree or complement each other:
 * - objects merge key by key (the schema's property order first);
 * - arrays are concatenated, most relevant page first, with duplicate items dropped (items
 *   compare equal after trimming strings and leaving out null fields), and cut at `maxItems`;
 * - a scalar the pages agree on (strings compared trimmed and case-insensitively) is kept; where
 *   they disagree, the most relevant page's value is taken and the disagreement is reported as a
 *   conflict, which the caller may settle with one model call (`applyChoice`).
 * Page relevance: pages the request named before pages found by wildcard expansion, then pages
 * that filled more values, then fetch order. `sources` maps each value's path (`a.b`, `list[2]`)
 * to the URLs that gave it. Pure: no I/O, no model.
 */

export interface PageData {
  url: string;
  data: unknown;
  /** The request named this URL (rather than a wildcard finding it). */
  named: boolean;
  /** Non-empty leaf values the page's extraction filled. */
  filled: number;
  /** Fetch order. */
  order: number;
}

export interface Candidate {
  value: unknown;
  sources: string[];
}

export interface Conflict {
  path: string;
  /** Most relevant first; candidate 0 is the one taken unless a choice is applied. */
  candidates: Candidate[];
}

export interface Merged {
  data: unknown;
  sources: Record<string, string[]>;
  conflicts: Conflict[];
  /** Sets the value of a conflict to its candidate `index` (and its sources). */
  applyChoice(path: string, index: number): boolean;
}

type Schema = Record<string, unknown>;
interface Entry {
  value: unknown;
  rank: number;
  url: string;
}

/** A slot the merged value of a conflict sits in, so a later choice can replace it. */
interface Slot {
  set(v: unknown): void;
}

export function mergePages(pages: PageData[], schema?: Schema): Merged {
  const ranked = [...pages].sort((a, b) => Number(b.named) - Number(a.named) || b.filled - a.filled || a.order - b.order);
  const sources: Record<string, string[]> = {};
  const conflicts: Conflict[] = [];
  const slots = new Map<string, Slot>();
  const root = { value: undefined as unknown };
  const entries = ranked.map((p, rank) => ({ value: p.data, rank, url: p.url }));

  const merge = (node: Schema | undefined, list: Entry[], path: string, slot: Slot): unknown => {
    const s = resolve(node, schema);
    const present = list.filter((e) => !isEmpty(e.value));
    const kind = kindOf(s, present.map((e) => e.value));
    if (kind === 'array') return mergeArray(s, list, path);
    if (kind === 'object') return mergeObject(s, present, path);
    if (!present.length) return list.some((e) => e.value !== undefined) ? null : undefined;
    const groups = new Map<string, Candidate & { best: number }>();
    for (const e of present) {
      const k = scalarKey(e.value);
      const g = groups.get(k);
      if (g) {
        if (!g.sources.includes(e.url)) g.sources.push(e.url);
      } else groups.set(k, { value: typeof e.value === 'string' ? e.value.trim() : e.value, sources: [e.url], best: e.rank });
    }
    const candidates = [...groups.values()].sort((a, b) => a.best - b.best || b.sources.length - a.sources.length).map(({ value, sources: src }) => ({ value, sources: src }));
    sources[pathKey(path)] = candidates[0]!.sources;
    if (candidates.length > 1) {
      conflicts.push({ path: pathKey(path), candidates });
      slots.set(pathKey(path), slot);
    }
    return candidates[0]!.value;
  };

  const mergeObject = (s: Schema | undefined, present: Entry[], path: string): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    const props = (s?.properties ?? {}) as Record<string, Schema>;
    const keys = [...Object.keys(props)];
    for (const e of present) for (const k of Object.keys(e.value as object)) if (!keys.includes(k)) keys.push(k);
    for (const key of keys) {
      const childPath = path ? `${path}.${key}` : key;
      const child = present.filter((e) => Object.hasOwn(e.value as object, key)).map((e) => ({ ...e, value: (e.value as Record<string, unknown>)[key] }));
      if (!child.length) continue;
      const v = merge(props[key] ?? additional(s), child, childPath, { set: (x) => (out[key] = x) });
      if (v !== undefined) out[key] = v;
    }
    return out;
  };

  const mergeArray = (s: Schema | undefined, list: Entry[], path: string): unknown[] => {
    const items: { value: unknown; urls: string[] }[] = [];
    const seen = new Map<string, number>();
    for (const e of [...list].sort((a, b) => a.rank - b.rank)) {
      if (!Array.isArray(e.value)) continue;
      for (const item of e.value) {
        if (isEmpty(item)) continue;
        const k = itemKey(item);
        const at = seen.get(k);
        if (at !== undefined) {
          if (!items[at]!.urls.includes(e.url)) items[at]!.urls.push(e.url);
          continue;
        }
        seen.set(k, items.length);
        items.push({ value: item, urls: [e.url] });
      }
    }
    const max = typeof s?.maxItems === 'number' ? s.maxItems : Infinity;
    const kept = items.slice(0, max);
    kept.forEach((it, i) => (sources[`${pathKey(path)}[${i}]`] = it.urls));
    return kept.map((it) => it.value);
  };

  root.value = merge(schema, entries, '', { set: (x) => (root.value = x) });
  return {
    get data() {
      return root.value === undefined ? null : root.value;
    },
    sources,
    conflicts,
    applyChoice(path, index) {
      const c = conflicts.find((x) => x.path === path);
      const slot = slots.get(path);
      const pick = c?.candidates[index];
      if (!c || !slot || !pick) return false;
      slot.set(pick.value);
      sources[path] = pick.sources;
      return true;
    },
  };
}

/** Non-empty leaf values of an extraction (array items count one each): a page's `filled`. */
export function countFilled(v: unknown): number {
  if (isEmpty(v)) return 0;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + Math.max(countFilled(x), isEmpty(x) ? 0 : 1), 0);
  if (isPlainObject(v)) return Object.values(v).reduce((n: number, x) => n + countFilled(x), 0);
  return 1;
}

const pathKey = (p: string) => p || '$';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isEmpty(v: unknown): boolean {
  return v === null || v === undefined || (typeof v === 'string' && !v.trim());
}

function scalarKey(v: unknown): string {
  if (typeof v === 'string') return `s:${v.trim().replace(/\s+/g, ' ').toLowerCase()}`;
  return `${typeof v}:${JSON.stringify(v)}`;
}

/** Array items compare by content: strings trimmed, object keys sorted, null fields left out. */
function itemKey(v: unknown): string {
  return JSON.stringify(normalize(v));
}

function normalize(v: unknown): unknown {
  if (typeof v === 'string') return v.trim().replace(/\s+/g, ' ').toLowerCase();
  if (Array.isArray(v)) return v.map(normalize);
  if (isPlainObject(v)) {
    return Object.fromEntries(
      Object.keys(v)
        .filter((k) => !isEmpty(v[k]))
        .sort()
        .map((k) => [k, normalize(v[k])]),
    );
  }
  return v;
}

/** The shape to merge as: the schema's type when it says one, else what the values are. */
function kindOf(s: Schema | undefined, values: unknown[]): 'array' | 'object' | 'scalar' {
  const t = typeOf(s);
  if (t === 'array' || t === 'object') return t;
  if (t) return 'scalar';
  if (s?.properties) return 'object';
  if (s?.items) return 'array';
  if (values.length && values.every(Array.isArray)) return 'array';
  if (values.length && values.every(isPlainObject)) return 'object';
  return 'scalar';
}

/** The non-null type of a schema node: `type: "x"`, `type: ["x", "null"]`. */
function typeOf(s: Schema | undefined): string | undefined {
  const t = s?.type;
  if (typeof t === 'string') return t === 'null' ? undefined : t;
  if (Array.isArray(t)) {
    const real = t.filter((x) => x !== 'null');
    return real.length === 1 ? String(real[0]) : undefined;
  }
  return undefined;
}

/** Follows local `$ref`s and unwraps `anyOf`/`oneOf` whose one branch is not null (how nullable fields are often written). */
function resolve(s: Schema | undefined, root: Schema | undefined, depth = 0): Schema | undefined {
  if (!s || depth > 20) return s;
  const ref = s.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/') && root) {
    let target: unknown = root;
    for (const part of ref.slice(2).split('/')) target = (target as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    return resolve(isPlainObject(target) ? target : undefined, root, depth + 1);
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = s[key];
    if (Array.isArray(branches)) {
      const real = branches.filter((b) => !(isPlainObject(b) && b.type === 'null'));
      if (real.length === 1) return resolve(real[0] as Schema, root, depth + 1);
    }
  }
  return s;
}

function additional(s: Schema | undefined): Schema | undefined {
  return isPlainObject(s?.additionalProperties) ? (s!.additionalProperties as Schema) : undefined;
}
