import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { crawlParamsPreviewSchema, crawlRequestSchema } from '@wds/contracts';
import { activeCrawls, insertCrawlJob } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { ApiDeps } from '../../deps';
import { forgetUrlInLogs, noteLogIds } from '../../logging';
import { requireScope } from '../../middleware/auth';
import { baseUrl } from '../../services/base-url';
import { planCrawl } from '../../services/crawl-plan';
import { checkScrapePolicy } from '../../services/scrape-policy';
import { validateBody } from './validate';

export interface CrawlConfig {
  defaultConcurrency: number;
  /** Batches per crawl workflow run before it continues as new (WDS_CRAWL_BATCHES_PER_RUN). */
  batchesPerRun?: number;
  publicUrl?: string;
}

const LLM_NEEDED = "is not available in this deployment: it needs an LLM, which is not configured.";

/** POST /v2/crawl: validate, store the job, start its workflow, answer with its id. */
export function crawlController(deps: ApiDeps, cfg: CrawlConfig) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'crawl');
    const o = validateBody(crawlRequestSchema, req.body);
    if (o.prompt) throw new WdsError('FEATURE_NOT_AVAILABLE', { code: 'FEATURE_NOT_AVAILABLE', message: `'prompt' ${LLM_NEEDED}` });
    if (o.zeroDataRetention && !req.auth.flags.zeroDataRetention) {
      throw new WdsError('FORBIDDEN', { message: 'Forbidden: zero data retention is not enabled for this team. Ask the operator to enable it.', code: 'ZDR_NOT_ENABLED' });
    }
    checkScrapePolicy({ ...o.scrapeOptions, zeroDataRetention: o.zeroDataRetention || o.scrapeOptions.zeroDataRetention }, req.auth);

    const id = randomUUID();
    noteLogIds(req, { jobId: id });
    if (o.zeroDataRetention) forgetUrlInLogs(req, o.url);
    const { url, ...options } = o;
    await insertCrawlJob(deps.db, {
      id,
      teamId: req.auth.teamId,
      kind: 'crawl',
      url,
      options,
      pageLimit: o.limit,
      zeroDataRetention: o.zeroDataRetention,
    });
    await deps.starters.startCrawl({ jobId: id, kind: 'crawl', plan: planCrawl(o, cfg.defaultConcurrency, cfg.batchesPerRun) });
    return reply.send({ success: true, id, url: `${baseUrl(req, cfg.publicUrl)}/v2/crawl/${id}` });
  };
}

/** GET /v2/crawl/active: the team's running crawls. */
export function activeCrawlsController(deps: ApiDeps) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'crawl');
    const rows = await activeCrawls(deps.db, req.auth.teamId);
    return reply.send({ success: true, crawls: rows.map((r) => ({ id: r.id, teamId: r.teamId, url: r.url, options: r.options })) });
  };
}

/** POST /v2/crawl/params-preview: turning a prompt into crawl options needs an LLM. */
export function paramsPreviewController() {
  return async (req: FastifyRequest) => {
    requireScope(req, 'crawl');
    validateBody(crawlParamsPreviewSchema, req.body);
    throw new WdsError('FEATURE_NOT_AVAILABLE', { code: 'FEATURE_NOT_AVAILABLE', message: `Crawl params preview ${LLM_NEEDED}` });
  };
}
