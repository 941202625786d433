import type { FastifyReply, FastifyRequest } from 'fastify';
import { openApiJson } from '@wds/contracts';

/** GET /v2/openapi.json (no auth): the OpenAPI 3.1 document generated from the contracts (packages/contracts/src/openapi.ts). */
export function openApiController() {
  return async (_req: FastifyRequest, reply: FastifyReply) => reply.type('application/json; charset=utf-8').send(openApiJson());
}
