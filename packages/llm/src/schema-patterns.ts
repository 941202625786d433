import { compileLinear } from '@wds/regex';

/** Caps of one schema pattern (a program of 5,000 RE2 instructions matches 64 KB in well under 50 ms). */
export const SCHEMA_PATTERN_LIMITS = { maxLength: 2_000, maxProgramSize: 5_000 } as const;

/** Keywords whose value is one subschema, an array of them, or a map of them (draft-07 to 2020-12). */
const ONE = ['additionalItems', 'items', 'contains', 'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema'];
const LIST = ['items', 'allOf', 'anyOf', 'oneOf', 'prefixItems'];
const MAP = ['$defs', 'definitions', 'properties', 'patternProperties', 'dependentSchemas', 'dependencies'];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Every `pattern` and `patternProperties` key of a schema that the linear-time engine refuses, as
 * "/properties/a/pattern '…' is not a supported …" lines. All of them, including those ajv would
 * never compile (a patternProperties entry whose schema is `{}`), so the 422 does not depend on
 * ajv's optimisations or on which draft accepted the schema. Iterative: nesting depth is the user's.
 */
export function refusedPatterns(root: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const check = (where: string, source: string) => {
    const c = compileLinear(source, SCHEMA_PATTERN_LIMITS);
    if (!c.ok) problems.push(`${where} '${source}' ${c.reason}`);
  };
  const stack: [Record<string, unknown>, string][] = [[root, '']];
  const seen = new Set<object>();
  while (stack.length && problems.length < 20) {
    const [s, at] = stack.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    if (typeof s.pattern === 'string') check(`${at}/pattern`, s.pattern);
    if (isObject(s.patternProperties)) for (const k of Object.keys(s.patternProperties)) check(`${at}/patternProperties`, k);
    const push = (v: unknown, path: string) => void (isObject(v) && stack.push([v, path]));
    for (const k of ONE) push(s[k], `${at}/${k}`);
    for (const k of LIST) if (Array.isArray(s[k])) (s[k] as unknown[]).forEach((v, i) => push(v, `${at}/${k}/${i}`));
    for (const k of MAP) if (isObject(s[k])) for (const [name, v] of Object.entries(s[k] as Record<string, unknown>)) push(v, `${at}/${k}/${pointerToken(name)}`);
  }
  return problems;
}

function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
