import type { FastifyRequest } from 'fastify';
import type { Scope } from '@wds/contracts';
import { findActiveKey, type AuthedKey, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthedKey;
  }
}

const BEARER = /^Bearer\s+([A-Za-z0-9._~+\/=-]{1,256})\s*$/i;

/** Every /v2 route: a valid, unrevoked key, else 401 with the spec's exact body. */
export function authenticate(db: Db) {
  return async (req: FastifyRequest) => {
    const m = BEARER.exec(req.headers.authorization ?? '');
    const found = m ? await findActiveKey(db, m[1]!) : null;
    if (!found) throw new WdsError('UNAUTHORIZED');
    req.auth = found;
  };
}

/** A key restricted to some scopes may use only those features. */
export function requireScope(req: FastifyRequest, scope: Scope): void {
  const scopes = req.auth.scopes;
  if (scopes && !scopes.includes(scope)) {
    throw new WdsError('FORBIDDEN', { message: 'Forbidden', details: { reason: `This API key is not allowed to use '${scope}'` } });
  }
}
