import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WdsError, toWdsError } from '@wds/errors';
import { logIdsOf } from './logging';

/** Framework errors (bad JSON, oversized body, wrong content type) in the documented body shape. */
function fromFastify(e: FastifyError): WdsError | null {
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return malformedJson(e.message);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_json', path: [], message: e.message }] });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new WdsError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new WdsError('UNSUPPORTED_MEDIA_TYPE', { message: 'Unsupported Media Type: send a JSON body with Content-Type: application/json' });
    default:
      if (e instanceof SyntaxError) return malformedJson(e.message);
      if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
        return new WdsError('BAD_REQUEST', { message: e.message });
      }
      return null;
  }
}

/** Firecrawl's answer to a body that is not JSON (its code and sentence), with the parser's reason in `details`. */
const malformedJson = (reason: string) =>
  new WdsError('BAD_REQUEST', { code: 'BAD_REQUEST_INVALID_JSON', message: 'Bad request, malformed JSON', details: [{ code: 'invalid_json', path: [], message: reason }] });

/**
 * Errors the router raises before any route runs (they bypass the error handler): a path that
 * does not percent-decode (`%FF`, an encoded lone surrogate) or a path parameter over the
 * length limit. Given to Fastify as its `frameworkErrors` option.
 */
export function frameworkErrors(e: FastifyError, _req: FastifyRequest, reply: FastifyReply) {
  const err = e.code === 'FST_ERR_MAX_PARAM_LENGTH'
    ? new WdsError('BAD_REQUEST', { details: [{ code: 'too_long', path: [], message: 'A path parameter is longer than 100 characters' }] })
    : new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_path', path: [], message: 'The path is not valid percent-encoded UTF-8' }] });
  return reply.status(err.status).send(err.toBody());
}

export function installErrorHandling(app: FastifyInstance) {
  // Node answers an `Expect` other than 100-continue itself, with an empty 417: give it the error body.
  app.server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.stringify({ success: false, error: 'Expectation Failed: only "Expect: 100-continue" is supported' });
    res.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(body);
  });
  app.setErrorHandler((e: FastifyError, req, reply) => {
    // No route matched, yet Fastify checked the body first (a QUERY or PATCH without Content-Type,
    // an unknown body type): the path and method are what is wrong, so the answer is 404 as for any
    // other unknown route, not a 400 about a body no route would read.
    if (req.routeOptions.url === undefined && !(e instanceof WdsError)) return reply.status(404).send(notFound(req.method, req.url));
    const err = e instanceof WdsError ? e : (fromFastify(e) ?? toWdsError(e));
    // The logger (@wds/log) redacts the error: the target-site headers and query parameters a
    // caller sent can sit in its properties or in a failed statement's parameters.
    if (err.status >= 500) req.log.error({ err: e, method: req.method, route: req.routeOptions.url, status: err.status, code: err.code, ...logIdsOf(req) }, 'request failed');
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
