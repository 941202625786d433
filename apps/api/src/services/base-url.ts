import type { FastifyRequest } from 'fastify';

/** The API's own base URL as the client reached it (for `url` and `next` links). */
export function baseUrl(req: FastifyRequest, configured?: string): string {
  if (configured) return configured.replace(/\/$/, '');
  const proto = (req.headers['x-forwarded-proto'] as string | undefined)?.split(',')[0]?.trim() || req.protocol;
  const host = (req.headers['x-forwarded-host'] as string | undefined) ?? req.headers.host ?? 'localhost';
  return `${proto}://${host}`;
}
