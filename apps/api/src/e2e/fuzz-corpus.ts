/**
 * A deterministic corpus of hostile requests for every route: valid bodies mutated (wrong
 * types, huge numbers, NUL and lone surrogates in any string or key, deep nesting, unknown
 * fields), whole-body replacements, broken JSON, odd content types and `Expect` headers, bad
 * path ids and query strings, and multipart uploads with bad options and file names. The same
 * seed gives the same corpus, so a failure names a case that reproduces.
 */

export interface FuzzCase {
  /** Short description of the mutation, for failure messages. */
  label: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** mulberry32: small, fast, good enough to spread mutations. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
    chance: (p: number) => next() < p,
  };
}
type Rng = ReturnType<typeof prng>;

/** Strings Postgres refuses, or that break naive handling. */
export const BAD_STRINGS = ['\u0000', 'a\u0000b', '\ud800', 'x\udc00', 'end\ud83d', '\udfff\ud800', '%00', '\\u0000', '\u202e', '\ufeff', '😀'];

function nested(depth: number, leaf: unknown, asArray: boolean): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
  return v;
}

function atom(r: Rng, target: string): unknown {
  switch (r.int(22)) {
    case 0: return null;
    case 1: return r.chance(0.5);
    case 2: return 0;
    case 3: return -1;
    case 4: return 1.5;
    case 5: return 1e308;
    case 6: return -1e308;
    case 7: return 2 ** 53 + 1;
    case 8: return '';
    case 9: return 'x'.repeat(r.pick([10, 1_000, 100_000]));
    case 10: return r.pick(BAD_STRINGS);
    case 11: return `${target}${r.pick(BAD_STRINGS)}`;
    case 12: return [];
    case 13: return {};
    case 14: return [r.pick(BAD_STRINGS), 1, null];
    case 15: return { [r.pick(BAD_STRINGS)]: 'v' };
    case 16: return nested(r.pick([10, 70, 1_000]), 'deep', r.chance(0.5));
    case 17: return Array.from({ length: r.pick([100, 10_000]) }, (_, i) => `${target}/${i}`);
    case 18: return target;
    case 19: return 'http://';
    case 20: return `${target}?token=${r.pick(BAD_STRINGS)}`;
    default: return { type: r.pick(['markdown', 'json', 'screenshot', 'nope', '\u0000']), schema: { type: 'object' } };
  }
}

/** Paths to every leaf of a JSON value (arrays and objects), for in-place mutation. */
function leaves(v: unknown, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (v !== null && typeof v === 'object') {
    const entries = Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v);
    if (!entries.length) out.push(path);
    for (const [k, x] of entries) leaves(x, [...path, k], out);
  } else out.push(path);
  return out;
}

function setAt(root: any, path: (string | number)[], value: unknown): any {
  if (!path.length) return value;
  const copy = structuredClone(root);
  let o = copy;
  for (const p of path.slice(0, -1)) o = o[p];
  o[path[path.length - 1]!] = value;
  return copy;
}

const UNKNOWN_FIELDS = ['unknownField', '__proto__', 'constructor', 'prototype', 'url\u0000', '\ud800', '', 'x'.repeat(300)];

/** One mutated body from a valid one. */
function mutate(r: Rng, base: Record<string, unknown>, fields: string[], target: string): { label: string; body: unknown; raw?: string } {
  switch (r.int(9)) {
    case 0: {
      const f = r.pick(fields);
      const v = atom(r, target);
      return { label: `${f}=${describe(v)}`, body: { ...base, [f]: v } };
    }
    case 1: {
      // A NUL or lone surrogate inside any string already in the body (every field, any depth).
      const strings = leaves(base).filter((p) => typeof p.reduce<any>((o, k) => o?.[k], base) === 'string');
      const p = r.pick(strings);
      const old = p.reduce<any>((o, k) => o[k], base) as string;
      const bad = r.pick(BAD_STRINGS.slice(0, 6));
      const at = r.int(old.length + 1);
      return { label: `${p.join('.')} with ${describe(bad)}`, body: setAt(base, p, old.slice(0, at) + bad + old.slice(at)) };
    }
    case 2: {
      const p = r.pick(leaves(base));
      const v = atom(r, target);
      return { label: `${p.join('.')}=${describe(v)}`, body: setAt(base, p, v) };
    }
    case 3: {
      const f = r.pick(fields);
      const { [f]: _gone, ...rest } = base;
      return { label: `without ${f}`, body: rest };
    }
    case 4: {
      const k = r.pick(UNKNOWN_FIELDS);
      return { label: `unknown key ${describe(k)}`, body: { ...base, [k]: atom(r, target) } };
    }
    case 5: {
      const v = r.pick<unknown>([null, [], [base], 'string', 42, true, nested(100, base, false)]);
      return { label: `body=${describe(v)}`, body: v };
    }
    case 8: {
      // Nesting deeper than a client's JSON.stringify can write (JSON.parse reads it): as text.
      const f = r.pick(fields);
      const n = r.pick([5_000, 50_000]);
      const deep = r.chance(0.5) ? `${'['.repeat(n)}1${']'.repeat(n)}` : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
      return { label: `${f} nested ${n} deep`, body: undefined, raw: JSON.stringify({ ...base, [f]: '__DEEP__' }).replace('"__DEEP__"', deep) };
    }
    case 6: {
      // Several fields at once.
      let body: Record<string, unknown> = { ...base };
      for (let i = 0; i < 2 + r.int(4); i++) body = { ...body, [r.pick(fields)]: atom(r, target) };
      return { label: 'many fields', body };
    }
    default:
      return { label: 'headers with bad bytes', body: { ...base, headers: { [r.pick(['Cookie', 'X-A', 'a\u0000'])]: r.pick(BAD_STRINGS) } } };
  }
}

function describe(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = '(unprintable)';
  }
  return s.length > 60 ? `${s.slice(0, 60)}…(${s.length})` : s;
}

export interface RouteSpec {
  method: 'POST';
  path: string;
  base: Record<string, unknown>;
  fields: string[];
}

/** Valid bodies of every JSON route, as rich as the contracts allow (each field can be mutated). */
export function jsonRoutes(target: string): RouteSpec[] {
  const scrapeOptions = {
    formats: ['markdown', 'links', { type: 'html' }],
    onlyMainContent: true,
    includeTags: ['main'],
    excludeTags: ['nav'],
    headers: { 'X-Test': 'a', Cookie: 'sid=1' },
    waitFor: 0,
    timeout: 5_000,
    location: { country: 'US', languages: ['en-US'] },
  };
  const webhook = { url: `${target}/hook`, headers: { 'X-Sig': 'v' }, metadata: { k: 'v' }, events: ['completed'] };
  return [
    { method: 'POST', path: '/v2/scrape', base: { url: target, ...scrapeOptions }, fields: ['url', 'formats', 'onlyMainContent', 'includeTags', 'excludeTags', 'headers', 'waitFor', 'timeout', 'location', 'maxAge', 'minAge', 'actions', 'parsers', 'proxy', 'profile', 'auditMetadata', 'catalog', 'redactPII'] },
    { method: 'POST', path: '/v2/scrape', base: { catalog: { provider: 'p', capability: 'c', options: { q: 'x' } }, timeout: 5_000 }, fields: ['catalog', 'timeout', 'url'] },
    { method: 'POST', path: '/v2/crawl', base: { url: target, limit: 2, includePaths: ['^/a'], excludePaths: ['^/b'], maxDiscoveryDepth: 1, sitemap: 'skip', webhook, scrapeOptions }, fields: ['url', 'limit', 'includePaths', 'excludePaths', 'maxDiscoveryDepth', 'sitemap', 'webhook', 'scrapeOptions', 'prompt', 'delay', 'maxConcurrency', 'robotsUserAgent'] },
    { method: 'POST', path: '/v2/crawl/params-preview', base: { url: target, prompt: 'find the docs' }, fields: ['url', 'prompt'] },
    { method: 'POST', path: '/v2/batch/scrape', base: { urls: [target, `${target}/2`], webhook, ignoreInvalidURLs: true, ...scrapeOptions }, fields: ['urls', 'webhook', 'ignoreInvalidURLs', 'maxConcurrency', 'appendToId', 'formats', 'headers', 'timeout'] },
    { method: 'POST', path: '/v2/map', base: { url: target, search: 'docs', sitemap: 'skip', limit: 10, timeout: 5_000, location: { country: 'US' } }, fields: ['url', 'search', 'sitemap', 'limit', 'timeout', 'location', 'includeSubdomains'] },
    { method: 'POST', path: '/v2/monitor', base: { name: 'fuzz', schedule: { cron: '*/5 * * * *', timezone: 'UTC' }, targets: [{ type: 'scrape', urls: [target], scrapeOptions }], webhook: { ...webhook, events: ['monitor.page'] }, retentionDays: 7, goal: 'changes' }, fields: ['name', 'schedule', 'targets', 'webhook', 'retentionDays', 'goal', 'judgeEnabled', 'notification'] },
    { method: 'POST', path: '/v2/scrape/00000000-0000-4000-8000-000000000000/interact', base: { code: 'await page.title()', prompt: 'click it', language: 'node', timeout: 5, origin: 'fuzz' }, fields: ['code', 'prompt', 'language', 'timeout', 'origin'] },
    { method: 'POST', path: '/v2/agent', base: { prompt: 'find the docs', urls: [target], schema: { type: 'object' }, maxCredits: 10, strictConstrainToURLs: true, model: 'spark-1-mini', webhook, origin: 'fuzz' }, fields: ['prompt', 'urls', 'schema', 'maxCredits', 'strictConstrainToURLs', 'model', 'effort', 'webhook', 'threadId', 'mode', 'exchange'] },
  ];
}

const JSON_CT = 'application/json';
const CONTENT_TYPES = ['application/json; charset=utf-8', 'application/json; charset=utf-16', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/xml', '', 'application/json, text/html', 'APPLICATION/JSON'];
// Paths and headers as a client can send them: percent-encoded / latin1 (Node refuses the rest client-side).
const ODD_IDS = ['00000000-0000-0000-0000-000000000000', 'not-a-uuid', '%00', '%ED%A0%80', '..%2F..%2Fetc', 'x'.repeat(2_000), '%F0%9F%98%80', '%FF'];
const ODD_QUERIES = ['', '?skip=-1', '?skip=1e309', '?skip=abc', '?skip=%00', '?skip=99999999999999999999', '?skip=1&skip=2', '?x=%ED%A0%80', '?before=1e309', '?before=-5', '?before=1&before=2', '?before=99999999999999999999', '?liveView=%00', '?limit=1e309&offset=%00', '?limit=0', '?status=%00', '?limit=1&limit=2'];
const GET_ROUTES = ['/v2/scrape/:id', '/v2/crawl/:id', '/v2/crawl/:id/errors', '/v2/batch/scrape/:id', '/v2/batch/scrape/:id/errors', '/v2/crawl/active', '/v2/team/credit-usage', '/v2/team/queue-status', '/v2/concurrency-check', '/v2/agent', '/v2/agent/:id', '/v2/agent/:id/trace', '/v2/agent/:id/snapshots/:id', '/v2/agent/threads/:id', '/v2/monitor', '/v2/monitor/:id', '/v2/monitor/:id/checks', '/v2/monitor/:id/checks/:id'];

/** A multipart body for POST /v2/parse with a (possibly hostile) file name and options part. */
function multipart(r: Rng): { label: string; headers: Record<string, string>; body: Buffer } {
  const boundary = `----wdsfuzz${r.int(1e9)}`;
  const filename = r.pick(['a.txt', 'a\u0000.txt', 'x\ud800.md', '', '../../etc/passwd', 'a'.repeat(5_000), 'résumé.txt']);
  const options = r.pick<unknown>([undefined, {}, { formats: ['markdown'] }, { formats: [r.pick(BAD_STRINGS)] }, { timeout: 'x' }, nested(200, 1, true), '{broken', { parsers: [{ type: 'pdf', mode: '\u0000' }] }]);
  const file = r.pick([Buffer.from('plain text file\n'), Buffer.from('nul \u0000 byte'), Buffer.from([0xff, 0xfe, 0x00, 0xd8]), Buffer.alloc(0)]);
  const parts: Buffer[] = [];
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${r.pick(['text/plain', 'application/octet-stream', 'text/\u0000'])}\r\n\r\n`));
  parts.push(file, Buffer.from('\r\n'));
  if (options !== undefined) {
    const text = typeof options === 'string' ? options : JSON.stringify(options);
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="options"\r\n\r\n${text}\r\n`));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { label: `parse filename=${describe(filename)} options=${describe(options)}`, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: Buffer.concat(parts) };
}

/**
 * `count` cases for the API at any address, whose outbound URLs point at `target` (the test
 * makes the target refuse quickly, so no case waits on the network).
 */
export function fuzzCorpus(seed: number, count: number, target: string): FuzzCase[] {
  const r = prng(seed);
  const routes = jsonRoutes(target);
  const out: FuzzCase[] = [];
  while (out.length < count) {
    const kind = r.int(20);
    if (kind < 15) {
      const route = r.pick(routes);
      const m = mutate(r, route.base, route.fields, target);
      const headers: Record<string, string> = { 'content-type': JSON_CT };
      let label = `${route.path} ${m.label}`;
      let body = Buffer.from(m.raw ?? JSON.stringify(m.body) ?? 'null');
      if (r.chance(0.1)) {
        headers.expect = r.pick(['100-continue', '100-Continue', 'something-else']);
        label += ` expect=${headers.expect}`;
      }
      if (r.chance(0.08)) {
        headers['content-type'] = r.pick(CONTENT_TYPES);
        label += ` content-type=${describe(headers['content-type'])}`;
      }
      if (r.chance(0.05)) {
        // Broken JSON: truncated, a UTF-8 BOM, raw invalid UTF-8 bytes, a lone-surrogate escape.
        const k = r.int(4);
        body = k === 0 ? body.subarray(0, Math.max(1, r.int(body.length))) : k === 1 ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]) : k === 2 ? Buffer.concat([body.subarray(0, -1), Buffer.from([0xc3, 0x28, 0x7d])]) : Buffer.from(JSON.stringify({ url: target }).replace('}', ',"headers":{"a":"\\udead"}}'));
        label += ` broken-json#${k}`;
      }
      if (r.chance(0.05)) {
        headers[r.pick(['x-request-id', 'x-idempotency-key'])] = r.pick(['ok-1', 'x'.repeat(500), 'a b', '\u00e9', '%00']);
        label += ' odd id header';
      }
      out.push({ label, method: route.method, path: route.path, headers, body });
    } else if (kind < 19) {
      const p = r.pick(GET_ROUTES).replace(':id', r.pick(ODD_IDS)) + r.pick(ODD_QUERIES);
      const method = p.endsWith('/errors') || !p.includes('/v2/crawl/') && !p.includes('/v2/batch/') || r.chance(0.7) ? 'GET' : 'DELETE';
      out.push({ label: `${method} ${p}`, method, path: p, headers: r.chance(0.1) ? { expect: '100-continue' } : {} });
    } else {
      const m = multipart(r);
      out.push({ label: m.label, method: 'POST', path: '/v2/parse', headers: m.headers, body: m.body });
    }
  }
  return out;
}
