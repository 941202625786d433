import { createHash } from 'node:crypto';
import { LlmCodes, LlmError } from './errors';
import { invalidSchema, type Draft } from './schema-compile';
import { schemaPool } from './schema-pool';

/**
 * Users' JSON Schemas. `compileUserSchema` checks one (the API's 422 at request time) and gives
 * what the model is sent; `validate` checks data against it. Both run ajv on the schema threads
 * (schema-pool.ts) under a deadline, with patterns on a linear-time engine (schema-compile.ts):
 * no schema and no data can stall the event loop of the process that asks.
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
  draft: Draft;
  validate(data: unknown): Promise<SchemaVerdict>;
}

export type SchemaVerdict = { ok: true } | { ok: false; errors: string[] };

const cache = new Map<string, CompiledSchema>();
const CACHE_SIZE = 256;

export async function compileUserSchema(schema: unknown): Promise<CompiledSchema> {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw invalidSchema('the schema must be a JSON Schema object', []);
  }
  const key = createHash('sha256').update(JSON.stringify(schema)).digest('base64');
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key); // LRU: most recent last
    cache.set(key, hit);
    return hit;
  }
  const reply = await schemaPool.run({ kind: 'compile', key, schema }, 'compiling the schema');
  if (!reply.ok) throw new LlmError('UNPROCESSABLE', LlmCodes.INVALID_SCHEMA, { message: reply.message, details: reply.details, retryable: false });
  if (!('draft' in reply)) throw new Error('schema thread: a compile answered as a validation');
  const compiled = build(schema as Record<string, unknown>, reply.draft, key);
  cache.set(key, compiled);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return compiled;
}

function build(s: Record<string, unknown>, draft: Draft, key: string): CompiledSchema {
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
    async validate(data) {
      const r = await schemaPool.run({ kind: 'validate', key, schema: s, data }, 'validating against the schema');
      if (!r.ok) throw new LlmError('UNPROCESSABLE', LlmCodes.INVALID_SCHEMA, { message: r.message, details: r.details, retryable: false });
      if (!('valid' in r)) throw new Error('schema thread: a validation answered as a compile');
      return r.valid ? { ok: true } : { ok: false, errors: r.errors };
    },
  };
}
