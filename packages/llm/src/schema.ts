import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { LlmCodes, LlmError } from './errors';

/**
 * Users' JSON Schemas: compiled once (cached by content), validated with ajv under the draft the
 * schema declares — 2020-12 (what zod v4 and pydantic emit), 2019-09, draft-07/06 (zod-to-json-schema)
 * — and, without `$schema`, 2020-12 first and draft-07 when only that accepts it (tuple `items`
 * arrays). Unknown keywords are ignored (strict: false) because users' schemas carry annotations;
 * a schema that breaks its meta-schema is an INVALID_SCHEMA error (422).
 *
 * `providerSchema` is what goes to the model: `$schema`/`$id` removed and, because OpenAI's
 * json_schema needs an object at the root, any other root wrapped as `{result: <schema>}`
 * (definitions hoisted so `#/$defs/...` references still resolve).
 */
export interface CompiledSchema {
  /** The user's schema as given. */
  schema: Record<string, unknown>;
  providerSchema: Record<string, unknown>;
  /** True when providerSchema wraps the user's root as `{result: ...}`. */
  wrapped: boolean;
  draft: '2020-12' | '2019-09' | 'draft-07';
  validate(data: unknown): { ok: true } | { ok: false; errors: string[] };
}

// logger: false — unknown formats in users' schemas are ignored silently rather than printed per compile.
const options = { strict: false, allErrors: true, addUsedSchema: false, validateFormats: true, logger: false } as const;
const validators = {
  '2020-12': addFormats(new Ajv2020(options)),
  '2019-09': addFormats(new Ajv2019(options)),
  'draft-07': addFormats(new Ajv(options)),
};

const cache = new Map<string, CompiledSchema>();
const CACHE_SIZE = 256;

export function compileUserSchema(schema: unknown): CompiledSchema {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw invalid('the schema must be a JSON Schema object', []);
  }
  const key = JSON.stringify(schema);
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key); // LRU: most recent last
    cache.set(key, hit);
    return hit;
  }
  const s = schema as Record<string, unknown>;
  const declared = typeof s.$schema === 'string' ? s.$schema : undefined;
  const drafts = declared ? [draftOf(declared)] : (['2020-12', 'draft-07'] as const);
  let firstErrors: string[] = [];
  for (const draft of drafts) {
    const result = tryCompile(draft, s);
    if ('fn' in result) {
      const compiled = build(s, draft, result.fn);
      cache.set(key, compiled);
      if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
      return compiled;
    }
    if (!firstErrors.length) firstErrors = result.errors;
  }
  throw invalid('the schema is not a valid JSON Schema', firstErrors);
}

function draftOf(uri: string): CompiledSchema['draft'] {
  if (uri.includes('2020-12')) return '2020-12';
  if (uri.includes('2019-09')) return '2019-09';
  if (/draft-0[67]/.test(uri)) return 'draft-07';
  throw invalid(`unsupported $schema "${uri}": use draft-07, 2019-09 or 2020-12`, []);
}

function tryCompile(draft: CompiledSchema['draft'], s: Record<string, unknown>): { fn: ValidateFunction } | { errors: string[] } {
  const ajv = validators[draft];
  // Validate against the meta-schema ourselves: compile() would report only the first problem.
  const { $schema: _ignored, ...body } = s;
  if (!ajv.validateSchema(body)) return { errors: formatErrors(ajv.errors) };
  try {
    return { fn: ajv.compile(body) };
  } catch (e) {
    // Unresolvable $ref, bad regex pattern, …
    return { errors: [e instanceof Error ? e.message : String(e)] };
  }
}

function build(s: Record<string, unknown>, draft: CompiledSchema['draft'], fn: ValidateFunction): CompiledSchema {
  const { $schema: _s, $id: _i, ...clean } = s;
  const rootIsObject = clean.type === 'object' || (clean.type === undefined && (clean.properties !== undefined || clean.additionalProperties !== undefined));
  let providerSchema: Record<string, unknown> = clean;
  if (!rootIsObject) {
    const { $defs, definitions, ...inner } = clean;
    providerSchema = {
      type: 'object',
      properties: { result: inner },
      required: ['result'],
      additionalProperties: false,
      ...($defs !== undefined ? { $defs } : {}),
      ...(definitions !== undefined ? { definitions } : {}),
    };
  }
  return {
    schema: s,
    providerSchema,
    wrapped: !rootIsObject,
    draft,
    validate(data) {
      if (fn(data)) return { ok: true };
      return { ok: false, errors: formatErrors(fn.errors) };
    },
  };
}

/** "/items/0/price must be number" lines, at most 20, for users and for the repair prompt. */
export function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).slice(0, 20).map((e) => {
    const where = e.instancePath || '(root)';
    const extra = e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty?: string }).additionalProperty})` : '';
    return `${where} ${e.message ?? e.keyword}${extra}`;
  });
}

function invalid(message: string, errors: string[]): LlmError {
  return new LlmError('UNPROCESSABLE', LlmCodes.INVALID_SCHEMA, {
    message: `Invalid JSON Schema: ${message}${errors.length ? `: ${errors.slice(0, 3).join('; ')}` : ''}`,
    retryable: false,
    details: errors.length ? { errors } : undefined,
  });
}
