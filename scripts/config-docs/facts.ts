import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { LOG_LEVELS } from '@wds/config';
import { evalNumber, root, type Declaration, type ProcessId } from './schemas';

/** The values a declaration accepts, said from its zod helper call (or its `@values` JSDoc tag). */
export function valuesOf(d: Declaration): string {
  const node = d.schema;
  const tag = ts.getJSDocTags(node.parent).find((t) => t.tagName.text === 'values');
  if (tag) return (ts.getTextOfJSDocComment(tag.comment) ?? '').trim();
  const calls: { name: string; args: readonly ts.Expression[] }[] = [];
  let e: ts.Expression = node;
  while (ts.isCallExpression(e)) {
    const callee = e.expression;
    if (ts.isPropertyAccessExpression(callee)) {
      calls.unshift({ name: `${ts.isIdentifier(callee.expression) ? `${callee.expression.text}.` : ''}${callee.name.text}`, args: e.arguments });
      e = callee.expression;
    } else if (ts.isIdentifier(callee)) {
      calls.unshift({ name: callee.text, args: e.arguments });
      break;
    } else break;
  }
  const first = calls[0];
  const list = (xs: readonly string[]) => `one of ${xs.map((x) => `\`${x}\``).join(', ')}`;
  switch (first?.name) {
    case 'envInt': {
      const min = first.args[1] ? evalNumber(first.args[1]) : 0;
      const max = first.args[2] ? evalNumber(first.args[2]) : undefined;
      return max === undefined ? `integer ≥ ${fmt(min!)}` : `integer ${fmt(min!)}–${fmt(max)}`;
    }
    case 'envBool': return '`true` or `false` (also `1`/`0`, `yes`/`no`)';
    case 'envStr': return 'text';
    case 'envUrl': return 'URL';
    case 'envLogLevel': return list(LOG_LEVELS);
    case 'z.enum': {
      const arr = first.args[0];
      if (arr && ts.isArrayLiteralExpression(arr)) return list(arr.elements.map((x) => (ts.isStringLiteral(x) ? x.text : x.getText())));
      break;
    }
    case 'z.string': {
      if (calls.some((c) => c.name === 'url')) return 'URL';
      const min = calls.find((c) => c.name === 'min')?.args[0];
      return min ? `text of at least ${evalNumber(min)} characters` : 'text';
    }
  }
  throw new Error(`${d.file}: ${d.name}: cannot say what ${node.getText(d.sourceFile).slice(0, 60)} accepts; add a \`@values\` tag to its comment`);
}

const fmt = (n: number) => (Number.isSafeInteger(n) && Math.abs(n) >= 100_000 ? n.toLocaleString('en-US') : String(n));

/** A default as the page shows it, with the unit spelled out where the name gives it. */
export function defaultText(name: string, value: unknown, required: boolean): string {
  if (required) return 'required';
  if (value === undefined) return 'unset';
  if (Array.isArray(value)) return value.length ? `\`${value.join(',')}\`` : 'none';
  if (typeof value === 'number') {
    const unit = humanUnit(name, value);
    return `\`${value}\`${unit ? ` (${unit})` : ''}`;
  }
  return `\`${String(value)}\``;
}

function humanUnit(name: string, n: number): string | undefined {
  if (n <= 0) return undefined;
  const by = (steps: [number, string][]) => {
    for (const [size, unit] of steps) if (n >= size && n % size === 0) return `${fmt(n / size)} ${unit === 'days' && n === size ? 'day' : unit}`;
    return undefined;
  };
  if (name.endsWith('_MS')) return by([[86_400_000, 'days'], [3_600_000, 'h'], [60_000, 'min'], [1_000, 's']]);
  if (name.endsWith('_SECONDS')) return by([[86_400, 'days'], [3_600, 'h'], [60, 'min']]);
  if (name.endsWith('_BYTES')) return by([[1024 ** 3, 'GiB'], [1024 ** 2, 'MiB'], [1024, 'KiB']]);
  return undefined;
}

/**
 * Which processes' code reads a variable: the identifiers (never comments or strings) of each
 * process's source files, and the variables the common helpers (`llmEnvOf`, …) read for them.
 * Every source file of apps/server must be assigned to `npm start` or to the CLIs.
 */
const SERVER_CLIS = ['apps/server/src/keys.ts', 'apps/server/src/catalog.ts', 'apps/server/src/search-backfill.ts'];
const SERVER_START = ['apps/server/src/main.ts', 'apps/server/src/supervise.ts', 'apps/server/src/env.ts'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(join(root, dir))) {
    const p = join(dir, n);
    if (statSync(join(root, p)).isDirectory()) { if (n !== 'e2e') out.push(...sources(p)); } else if (n.endsWith('.ts') && !n.endsWith('.test.ts') && n !== 'env.ts') out.push(p);
  }
  return out;
}

function identifiers(file: string): Set<string> {
  const sf = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.ES2022, true);
  const ids = new Set<string>();
  const walk = (n: ts.Node): void => {
    if (ts.isIdentifier(n)) ids.add(n.text);
    n.forEachChild(walk);
  };
  walk(sf);
  return ids;
}

/** Variables each exported function of common.ts reads, by function name. */
function helperReads(names: Set<string>): Map<string, Set<string>> {
  const file = 'packages/config/src/common.ts';
  const sf = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.ES2022, true);
  const out = new Map<string, Set<string>>();
  for (const st of sf.statements) {
    if (!ts.isFunctionDeclaration(st) || !st.name || !st.body) continue;
    const ids = new Set<string>();
    const walk = (n: ts.Node): void => {
      if (ts.isIdentifier(n) && names.has(n.text)) ids.add(n.text);
      n.forEachChild(walk);
    };
    walk(st.body);
    out.set(st.name.text, ids);
  }
  return out;
}

export function usage(names: Set<string>): Map<string, Set<ProcessId>> {
  const server = sources('apps/server/src');
  const unassigned = server.filter((f) => !SERVER_CLIS.includes(f) && !SERVER_START.includes(f));
  if (unassigned.length) throw new Error(`scripts/config-docs/facts.ts: say whether ${unassigned.join(', ')} belong to \`npm start\` or the CLIs`);
  const files: Record<ProcessId, string[]> = {
    api: sources('apps/api/src'),
    worker: sources('apps/worker/src'),
    start: SERVER_START.filter((f) => !f.endsWith('env.ts')),
    cli: SERVER_CLIS,
  };
  const helpers = helperReads(names);
  const used = new Map<string, Set<ProcessId>>([...names].map((n) => [n, new Set<ProcessId>()]));
  for (const [proc, list] of Object.entries(files) as [ProcessId, string[]][]) {
    for (const f of list) {
      for (const id of identifiers(relative(root, join(root, f)))) {
        used.get(id)?.add(proc);
        for (const v of helpers.get(id) ?? []) used.get(v)!.add(proc);
      }
    }
  }
  return used;
}
