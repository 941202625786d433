import { parseBody, type Infer, type Schema } from '@wds/contracts';
import { WdsError } from '@wds/errors';

/** Validates a body; url problems answer `Invalid URL`, everything else `Bad Request`, both with per-field details. */
export function validateBody<S extends Schema>(schema: S, body: unknown): Infer<S> {
  if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
    throw new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_type', path: [], message: 'The request body must be a JSON object' }] });
  }
  const r = parseBody(schema, body);
  if (r.ok) return r.data;
  throw new WdsError(r.urlInvalid ? 'INVALID_URL' : 'BAD_REQUEST', { details: r.details });
}
