import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { V1_UNAVAILABLE } from '@wds/contracts';
import { WdsError } from '@wds/errors';
import { batchScrapeController } from '../controllers/v2/batch';
import { activeCrawlsController, crawlController } from '../controllers/v2/crawl';
import { extractController, extractStatusController } from '../controllers/v2/extract';
import { jobControllers } from '../controllers/v2/jobs';
import { mapController } from '../controllers/v2/map';
import { scrapeController } from '../controllers/v2/scrape';
import { searchController } from '../controllers/v2/search';
import { teamControllers } from '../controllers/v2/team';
import { batchToV2, crawlToV2, extractToV2, mapToV2, scrapeOptionsToV2, searchToV2, type V1Wants } from '../controllers/v1/request';
import { v1Answers } from '../controllers/v1/response';
import type { ApiDeps } from '../deps';
import { scrapeCreditCheck } from '../middleware/limits';
import type { RouteConfig, RouteShared } from './v2';

/**
 * Firecrawl's v1 API (docs/compatibility.md): each route runs the v2 controller of the same job,
 * with the body translated to v2 before it (controllers/v1/request.ts) and the answer translated
 * back to v1 after it (controllers/v1/response.ts). No v1 engine: the same validation, limits,
 * workflows and stored jobs as v2, so a crawl started on v1 can be read on v2 and the other way round.
 */
type Body = Record<string, unknown>;
type IdRoute = { Params: { id: string }; Querystring: { skip?: string } };
const wantsOf = new WeakMap<FastifyRequest, V1Wants>();

/** Route options: the body rewritten before the v2 handler validates it, the success body rewritten before it is serialised. */
function adapt(toV2: ((b: Body) => { body: Body; wants?: V1Wants }) | undefined, toV1: ((b: Body, wants?: V1Wants) => Body) | undefined) {
  return {
    ...(toV2 && {
      preValidation: async (req: FastifyRequest) => {
        const body = req.body;
        // Not an object: the v2 controller answers its own 400 for it.
        if (!body || typeof body !== 'object' || Array.isArray(body)) return;
        const out = toV2(body as Body);
        if (out.wants) wantsOf.set(req, out.wants);
        req.body = out.body;
      },
    }),
    ...(toV1 && {
      preSerialization: async (req: FastifyRequest, _reply: FastifyReply, payload: unknown) => {
        const p = payload as Body | null;
        return p && typeof p === 'object' && p.success === true ? toV1(p, wantsOf.get(req)) : payload;
      },
    }),
  };
}

const only = (f: (b: Body) => Body) => (b: Body) => ({ body: f(b) });

/** GET /v1/crawl/:id answers batch scrapes too: the JS SDK v1 polls every job there (monitorJobStatus). */
function eitherJob<R>(first: (req: R, reply: FastifyReply) => Promise<unknown>, second: (req: R, reply: FastifyReply) => Promise<unknown>) {
  return async (req: R, reply: FastifyReply) => {
    try {
      return await first(req, reply);
    } catch (e) {
      if (e instanceof WdsError && e.kind === 'NOT_FOUND') return second(req, reply);
      throw e;
    }
  };
}

export async function v1Routes(app: FastifyInstance, deps: ApiDeps, cfg: RouteConfig, { limitsOf, admit, search }: RouteShared) {
  app.addHook('onRequest', async (req) => {
    // Both v1 SDKs send `Content-Type: application/json` with their bodiless DELETEs (cancel, and
    // the JS SDK's errors read), which the JSON parser refuses as an empty body: there is no body to parse.
    const h = req.headers;
    if (req.method === 'DELETE' && (h['content-length'] === undefined || h['content-length'] === '0') && h['transfer-encoding'] === undefined) delete h['content-type'];
  });
  app.addHook('preValidation', admit);
  const scrapeBody = (b: Body) => {
    const { url, ...options } = b;
    const { body, wants } = scrapeOptionsToV2(options);
    return { body: { url, ...body }, wants };
  };
  app.post('/scrape', { ...adapt(scrapeBody, v1Answers.scrape), preHandler: scrapeCreditCheck(deps.db, limitsOf) }, scrapeController(deps));
  app.post('/map', adapt(only(mapToV2), v1Answers.map), mapController(deps));

  const jobs = { pageBytes: cfg.statusPageBytes, publicUrl: cfg.publicUrl };
  const crawl = jobControllers(deps, 'crawl', jobs);
  const batch = jobControllers(deps, 'batch', jobs);
  const status = adapt(undefined, v1Answers.status);
  app.post('/crawl', adapt(only(crawlToV2), v1Answers.started), crawlController(deps, cfg));
  app.get('/crawl/active', activeCrawlsController(deps));
  app.get<IdRoute>('/crawl/:id', status, eitherJob(crawl.status, batch.status));
  app.delete('/crawl/:id', crawl.cancel);
  app.get('/crawl/:id/errors', crawl.errors);
  app.delete('/crawl/:id/errors', crawl.errors);

  app.post('/batch/scrape', adapt(batchToV2, v1Answers.started), batchScrapeController(deps, cfg));
  app.get<IdRoute>('/batch/scrape/:id', status, batch.status);
  app.delete('/batch/scrape/:id', batch.cancel);
  app.get('/batch/scrape/:id/errors', batch.errors);
  app.delete('/batch/scrape/:id/errors', batch.errors);

  app.post('/search', adapt(only(searchToV2), v1Answers.search), searchController(deps, cfg, search));
  app.post('/extract', adapt(only(extractToV2), v1Answers.started), extractController(deps, { ...cfg.extract, publicUrl: cfg.publicUrl }));
  app.get('/extract/:id', extractStatusController(deps));

  const team = teamControllers(deps, limitsOf);
  app.get('/team/credit-usage', adapt(undefined, v1Answers.creditUsage), team.creditUsage);
  app.get('/team/token-usage', adapt(undefined, v1Answers.tokenUsage), team.tokenUsage);
  app.get('/team/queue-status', team.queueStatus);

  for (const u of V1_UNAVAILABLE) {
    app.route({
      method: u.method,
      url: u.path.slice('/v1'.length),
      handler: async () => {
        throw new WdsError('FEATURE_NOT_AVAILABLE', {
          code: 'FEATURE_NOT_AVAILABLE',
          message: `${u.method} ${u.path.replace(':id', '{id}')} is not available in WDS (Firecrawl has deprecated it): use ${u.instead}.`,
        });
      },
    });
  }
}
