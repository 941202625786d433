import type { FastifyRequest } from 'fastify';
import type { Scope } from '@wds/contracts';
import type { AuthedKey } from '@wds/db';
import { WdsError } from '@wds/errors';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthedKey;
  }
}

// Keys are checked with the request's limits, in one statement: admitRequests (limits.ts).

/** A key restricted to some scopes may use only those features. */
export function requireScope(req: FastifyRequest, scope: Scope): void {
  const scopes = req.auth.scopes;
  if (scopes && !scopes.includes(scope)) {
    throw new WdsError('FORBIDDEN', { message: 'Forbidden', details: { reason: `This API key is not allowed to use '${scope}'` } });
  }
}
