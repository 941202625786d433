import Ajv, { type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { compileLinear } from '@wds/regex';
import { LlmCodes, LlmError } from './errors';
import { refusedPatterns, SCHEMA_PATTERN_LIMITS } from './schema-patterns';

/**
 * The compiler behind `compileUserSchema`, run on the schema threads (schema-thread.ts), never on
 * a process's event loop: ajv under the draft the schema declares — 2020-12 (what zod v4 and
 * pydantic emit), 2019-09, draft-07/06 (zod-to-json-schema) — and, without `$schema`, 2020-12
 * first and draft-07 when only that accepts it (tuple `items` arrays). Unknown keywords are
 * ignored (strict: false) because users' schemas carry annotations; a schema that breaks its
 * meta-schema, or whose patterns the linear-time engine refuses, is an INVALID_SCHEMA error (422).
 *
 * `pattern`, `patternProperties` and `propertyNames` patterns run on RE2 (`@wds/regex`), not on
 * JavaScript's backtracking RegExp: the data they test is the model's answer, which the
 * request's own prompt steers.
 */
export type Draft = '2020-12' | '2019-09' | 'draft-07';


/** ajv's regular expression engine. Every pattern was checked (refusedPatterns); one reached only through an odd `$ref` fails the compile. */
function linearRegExp(pattern: string): { test(s: string): boolean } {
  const c = compileLinear(pattern, SCHEMA_PATTERN_LIMITS);
  if (!c.ok) throw new Error(`pattern '${pattern}' ${c.reason}`);
  return c.regex;
}
// For ajv's standalone code, which we never generate; ajv requires the property.
linearRegExp.code = 'require("@wds/regex").compileLinear';

// logger: false — unknown formats in users' schemas are ignored silently rather than printed per compile.
const options: Options = { strict: false, allErrors: true, addUsedSchema: false, validateFormats: true, logger: false, code: { regExp: linearRegExp } };
const validators = {
  '2020-12': addFormats(new Ajv2020(options)),
  '2019-09': addFormats(new Ajv2019(options)),
  'draft-07': addFormats(new Ajv(options)),
};


export interface SchemaFunction {
  draft: Draft;
  fn: ValidateFunction;
}

/** Compiles a user's schema; throws the 422 LlmError naming what is wrong. */
export function compileSchemaFunction(schema: unknown): SchemaFunction {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw invalidSchema('the schema must be a JSON Schema object', []);
  }
  const s = schema as Record<string, unknown>;
  const refused = refusedPatterns(s);
  if (refused.length) throw invalidSchema('a pattern cannot run on the linear-time engine', refused);
  const declared = typeof s.$schema === 'string' ? s.$schema : undefined;
  const drafts = declared ? [draftOf(declared)] : (['2020-12', 'draft-07'] as const);
  let firstErrors: string[] = [];
  for (const draft of drafts) {
    const result = tryCompile(draft, s);
    if ('fn' in result) return { draft, fn: result.fn };
    if (!firstErrors.length) firstErrors = result.errors;
  }
  throw invalidSchema('the schema is not a valid JSON Schema', firstErrors);
}

function draftOf(uri: string): Draft {
  if (uri.includes('2020-12')) return '2020-12';
  if (uri.includes('2019-09')) return '2019-09';
  if (/draft-0[67]/.test(uri)) return 'draft-07';
  throw invalidSchema(`unsupported $schema "${uri}": use draft-07, 2019-09 or 2020-12`, []);
}

function tryCompile(draft: Draft, s: Record<string, unknown>): { fn: ValidateFunction } | { errors: string[] } {
  const ajv = validators[draft];
  // Validate against the meta-schema ourselves: compile() would report only the first problem.
  const { $schema: _ignored, ...body } = s;
  if (!ajv.validateSchema(body)) return { errors: formatErrors(ajv.errors) };
  try {
    return { fn: ajv.compile(body) };
  } catch (e) {
    // Unresolvable $ref, a pattern RE2 refuses, …
    return { errors: [e instanceof Error ? e.message : String(e)] };
  } finally {
    // ajv keeps every schema object it compiled; ours are new objects each time.
    ajv.removeSchema(body);
  }
}

/** "/items/0/price must be number" lines, at most 20, for users and for the repair prompt. */
export function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).slice(0, 20).map((e) => {
    const where = e.instancePath || '(root)';
    const extra = e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty?: string }).additionalProperty})` : '';
    return `${where} ${e.message ?? e.keyword}${extra}`;
  });
}

export function invalidSchema(message: string, errors: string[]): LlmError {
  return new LlmError('UNPROCESSABLE', LlmCodes.INVALID_SCHEMA, {
    message: `Invalid JSON Schema: ${message}${errors.length ? `: ${errors.slice(0, 3).join('; ')}` : ''}`,
    retryable: false,
    details: errors.length ? { errors } : undefined,
  });
}
