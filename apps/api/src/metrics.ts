import type { FastifyInstance, FastifyRequest } from 'fastify';
import { exposition, httpDuration, httpInFlight, httpRequests, jobDuration, jobsFinished, jobsStarted, type JobKind } from '@wds/metrics';

/** POST routes that start a job, by route pattern. */
const JOB_ROUTES: Record<string, JobKind> = {
  '/v2/scrape': 'scrape',
  '/v2/crawl': 'crawl',
  '/v2/batch/scrape': 'batch',
  '/v2/map': 'map',
  '/v2/parse': 'parse',
};
/** Jobs the API waits for: their response is also their end. */
const SYNC: ReadonlySet<JobKind> = new Set(['scrape', 'map', 'parse']);

const started = Symbol('metricsStart');
type Timed = FastifyRequest & { [started]?: bigint };

/**
 * HTTP and job metrics from Fastify hooks, and GET /metrics. The route label is the matched
 * pattern (`/v2/crawl/:id`), `unmatched` for 404s without a route, so label sets stay bounded.
 * Job counting at the API: a job started when a job route answered 2xx, or 5xx/408 (it ran and
 * failed); validation and limit refusals (other 4xx) start nothing. Crawl and batch jobs end on
 * workers (counted there, see apps/worker).
 */
export function installMetrics(app: FastifyInstance): void {
  app.addHook('onRequest', async (req) => {
    (req as Timed)[started] = process.hrtime.bigint();
    httpInFlight.inc();
  });
  app.addHook('onResponse', async (req, reply) => {
    httpInFlight.dec();
    const t0 = (req as Timed)[started];
    const seconds = t0 === undefined ? 0 : Number(process.hrtime.bigint() - t0) / 1e9;
    const route = req.routeOptions.url ?? 'unmatched';
    const status = String(reply.statusCode);
    const labels = { method: req.method, route, status };
    httpRequests.inc(labels);
    httpDuration.observe(labels, seconds);

    const kind = req.method === 'POST' ? JOB_ROUTES[route] : undefined;
    if (!kind) return;
    const code = reply.statusCode;
    const ok = code >= 200 && code < 300;
    if (!ok && code < 500 && code !== 408) return;
    jobsStarted.inc({ kind });
    if (SYNC.has(kind)) {
      const s = ok ? 'completed' : 'failed';
      jobsFinished.inc({ kind, status: s });
      jobDuration.observe({ kind, status: s }, seconds);
    }
  });
  app.get('/metrics', async (_req, reply) => {
    const { contentType, body } = await exposition();
    return reply.header('content-type', contentType).send(body);
  });
}
