import type { FastifyInstance } from 'fastify';
import { agentRoutes, type AgentConfig } from '../controllers/v2/agent';
import { batchScrapeController } from '../controllers/v2/batch';
import { extractController, extractStatusController, type ExtractConfig } from '../controllers/v2/extract';
import { activeCrawlsController, crawlController, paramsPreviewController, type CrawlConfig } from '../controllers/v2/crawl';
import { jobControllers } from '../controllers/v2/jobs';
import { mapController } from '../controllers/v2/map';
import { monitorRoutes } from '../controllers/v2/monitor';
import type { MonitorConfig } from '../controllers/v2/monitor-shared';
import { interactControllers, type InteractConfig } from '../controllers/v2/interact';
import { parseRoutes, type ParseConfig } from '../controllers/v2/parse';
import { scrapeController } from '../controllers/v2/scrape';
import { searchController } from '../controllers/v2/search';
import { OwnIndexProvider } from '@wds/search';
import { scrapeStatusController } from '../controllers/v2/scrape-status';
import type { ApiDeps } from '../deps';
import { admitRequests, scrapeCreditCheck, teamLimitsReader, type LimitsConfig } from '../middleware/limits';
import { teamControllers } from '../controllers/v2/team';

export interface RouteConfig extends CrawlConfig {
  statusPageBytes: number;
  /** Per-team limits: the deployment's defaults and how long a scrape waits for a concurrency slot. */
  limits: LimitsConfig;
  parse: ParseConfig;
  extract: ExtractConfig;
  agent: AgentConfig;
  monitor: MonitorConfig;
  interact: InteractConfig;
}

/**
 * What the v2 and v1 route tables share, built once per process: the team-limits cache, the
 * admission hook (its key → team memory) and the search provider.
 */
export function routeShared(deps: ApiDeps, cfg: RouteConfig) {
  const limitsOf = teamLimitsReader(deps.db, cfg.limits.defaults);
  return {
    limitsOf,
    admit: admitRequests(deps.db, cfg.limits, limitsOf),
    search: deps.search ?? new OwnIndexProvider(deps.db, { shared: deps.sharedIndex ?? false }),
  };
}
export type RouteShared = ReturnType<typeof routeShared>;

/** The v2 route table. Every route sits behind authentication. */
export async function v2Routes(app: FastifyInstance, deps: ApiDeps, cfg: RouteConfig, { limitsOf, admit, search }: RouteShared) {
  // After the body is parsed, as Firecrawl does: malformed JSON answers 400 BAD_REQUEST_INVALID_JSON
  // whatever the key. Uploads are not read before this (parse's multipart parser streams in the handler).
  app.addHook('preValidation', admit);
  app.post('/scrape', { preHandler: scrapeCreditCheck(deps.db, limitsOf) }, scrapeController(deps));
  app.get('/scrape/:id', scrapeStatusController(deps));
  const interact = interactControllers(deps, cfg.interact, limitsOf);
  app.post('/scrape/:id/interact', interact.run);
  app.delete('/scrape/:id/interact', interact.stop);

  const crawl = jobControllers(deps, 'crawl', { pageBytes: cfg.statusPageBytes, publicUrl: cfg.publicUrl });
  app.post('/crawl', crawlController(deps, cfg));
  app.get('/crawl/active', activeCrawlsController(deps));
  // Firecrawl serves both names (the SDKs call /crawl/active).
  app.get('/crawl/ongoing', activeCrawlsController(deps));
  app.post('/crawl/params-preview', paramsPreviewController(deps, cfg));
  app.get('/crawl/:id', crawl.status);
  app.delete('/crawl/:id', crawl.cancel);
  app.get('/crawl/:id/errors', crawl.errors);

  const batch = jobControllers(deps, 'batch', { pageBytes: cfg.statusPageBytes, publicUrl: cfg.publicUrl });
  app.post('/batch/scrape', batchScrapeController(deps, cfg));
  app.get('/batch/scrape/:id', batch.status);
  app.delete('/batch/scrape/:id', batch.cancel);
  app.get('/batch/scrape/:id/errors', batch.errors);

  app.post('/map', mapController(deps));
  app.post('/extract', extractController(deps, { ...cfg.extract, publicUrl: cfg.publicUrl }));
  app.get('/extract/:id', extractStatusController(deps));
  app.post('/search', searchController(deps, cfg, search));
  await app.register(parseRoutes(deps, cfg.parse));
  await app.register(agentRoutes(deps, cfg.agent, limitsOf));
  const crawlSettings = { defaultConcurrency: cfg.defaultConcurrency, batchesPerRun: cfg.batchesPerRun, maxCrawlLimit: cfg.maxCrawlLimit };
  await app.register(monitorRoutes(deps, { ...cfg.monitor, publicUrl: cfg.publicUrl, crawl: crawlSettings }, limitsOf));

  const team = teamControllers(deps, limitsOf);
  app.get('/team/credit-usage', team.creditUsage);
  app.get('/team/token-usage', team.tokenUsage);
  app.get('/team/queue-status', team.queueStatus);
  app.get('/concurrency-check', team.concurrencyCheck);
}
