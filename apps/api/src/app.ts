import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from '@wds/contracts';
import type { Logger } from '@wds/log';
import type { ApiDeps } from './deps';
import { filesController, type FilesConfig } from './controllers/v2/files';
import { monitorEmailLinkRoutes } from './controllers/v2/monitor-email-links';
import { frameworkErrors, installErrorHandling } from './errors';
import { installRequestLog } from './logging';
import { installMetrics } from './metrics';
import { openApiController } from './controllers/v2/openapi';
import { docsAssetController, docsPageController } from './controllers/v2/docs';
import { installResponseCheck, type Mismatch } from './response-check';
import { v1Routes } from './routes/v1';
import { routeShared, v2Routes, type RouteConfig } from './routes/v2';
import { attachJobStreams, type JobStreamConfig } from './ws/job-stream';

export interface AppOptions extends RouteConfig {
  maxRequestBytes: number;
  /** The process logger (@wds/log): JSON lines, credentials redacted. */
  log: Logger;
  /** Serving of stored files (screenshots, action PDFs); absent = no files route. */
  files?: FilesConfig;
  /** WebSocket watchers: connections per key and backpressure. */
  streams: JobStreamConfig;
  /** Test suites: every response and WebSocket message is checked against the OpenAPI document; mismatches go here. */
  responseCheck?: (m: Mismatch) => void;
}

export async function buildApp(deps: ApiDeps, opts: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: opts.maxRequestBytes,
    // Fastify's request logs carry the URL (credentials in queries, lockdown scrapes' targets):
    // ours (installRequestLog) name the route pattern instead.
    loggerInstance: opts.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    ajv: { customOptions: { coerceTypes: false } },
    frameworkErrors,
  });
  installErrorHandling(app);
  // First, so that it sees every route and every answer (see response-check.ts).
  const checkMessage = opts.responseCheck ? installResponseCheck(app, buildOpenApiDocument(), opts.responseCheck) : undefined;
  installRequestLog(app);
  // JSON only: any other body type is answered 415 rather than parsed as a string.
  app.removeContentTypeParser('text/plain');
  installMetrics(app);

  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_req, reply) => {
    const r = await deps.ready();
    const ok = r.postgres && r.temporal;
    return reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not ready', ...r });
  });
  const shared = routeShared(deps, opts);
  await app.register(async (v2) => v2Routes(v2, deps, opts, shared), { prefix: '/v2' });
  // Firecrawl's v1 API: adapters that run the v2 controllers (routes/v1.ts).
  await app.register(async (v1) => v1Routes(v1, deps, opts, shared), { prefix: '/v1' });
  // Signed links instead of bearer auth, so it sits outside the authenticated v2 plugin.
  if (opts.files) app.get('/v2/files/*', filesController(opts.files));
  // Monitor emails' confirm and unsubscribe links, signed with the same secret.
  if (opts.files) await app.register(monitorEmailLinkRoutes({ db: deps.db, secret: opts.files.secret }));
  app.get('/v2/openapi.json', openApiController());
  // The reference rendered from that document, unauthenticated like it.
  app.get('/docs', docsPageController());
  app.get('/docs/:asset', docsAssetController());
  const streams = attachJobStreams(app, deps, { ...opts.streams, onMessage: checkMessage });
  // Before the server closes: it waits for every socket, and a WebSocket never ends by itself.
  app.addHook('preClose', () => streams.close());
  return app;
}
