import type { FastifyError, FastifyInstance } from 'fastify';
import { WdsError, toWdsError } from '@wds/errors';

/** Framework errors (bad JSON, oversized body, wrong content type) in the documented body shape. */
function fromFastify(e: FastifyError): WdsError | null {
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_json', path: [], message: e.message }] });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new WdsError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new WdsError('UNSUPPORTED_MEDIA_TYPE', { message: 'Unsupported Media Type: send a JSON body with Content-Type: application/json' });
    default:
      if (e instanceof SyntaxError) return new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_json', path: [], message: e.message }] });
      if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
        return new WdsError('BAD_REQUEST', { message: e.message });
      }
      return null;
  }
}

export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((e: FastifyError, req, reply) => {
    // No route matched, yet Fastify checked the body first (a QUERY or PATCH without Content-Type,
    // an unknown body type): the path and method are what is wrong, so the answer is 404 as for any
    // other unknown route, not a 400 about a body no route would read.
    if (req.routeOptions.url === undefined && !(e instanceof WdsError)) return reply.status(404).send(notFound(req.method, req.url));
    const err = e instanceof WdsError ? e : (fromFastify(e) ?? toWdsError(e));
    if (err.status >= 500) req.log.error({ err: e }, 'request failed');
    if ((err.kind === 'RATE_LIMITED' || err.kind === 'CONCURRENCY_LIMITED') && !reply.hasHeader('Retry-After')) reply.header('Retry-After', '60');
    return reply.status(err.status).send(err.toBody());
  });
  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send(notFound(req.method, req.url));
  });
}

function notFound(method: string, url: string) {
  return new WdsError('NOT_FOUND', { message: `Not Found: ${method} ${url.split('?')[0]}` }).toBody();
}
