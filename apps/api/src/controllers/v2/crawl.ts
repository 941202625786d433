import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { crawlParamsPreviewSchema, crawlRequestSchema, keepsNoData } from '@wds/contracts';
import { activeCrawls, insertCrawlJob } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { ApiDeps } from '../../deps';
import { forgetUrlInLogs, noteLogIds } from '../../logging';
import { requireScope } from '../../middleware/auth';
import { baseUrl } from '../../services/base-url';
import { planCrawl } from '../../services/crawl-plan';
import { startJob } from '../../services/jobs';
import { crawlJob } from '@wds/workflows/job-specs';
import { checkScrapePolicy } from '../../services/scrape-policy';
import { checkTeamFeatures } from '../../services/team-features';
import { chargeParamsPreview, crawlOptionsFromPrompt, withPromptOptions } from '../../services/crawl-prompt';
import { validateBody } from './validate';

export interface CrawlConfig {
  defaultConcurrency: number;
  /** Batches per crawl workflow run before it continues as new (WDS_CRAWL_BATCHES_PER_RUN). */
  batchesPerRun?: number;
  publicUrl?: string;
  /** Largest crawl `limit` accepted (WDS_MAX_CRAWL_LIMIT); absent = the schema's bound. */
  maxCrawlLimit?: number;
  /** How long turning a crawl `prompt` into options may take (WDS_CRAWL_PROMPT_TIMEOUT_MS). */
  promptTimeoutMs?: number;
}

/** POST /v2/crawl: validate, store the job, start its workflow (or fail both: see startJob), answer with its id. */
export function crawlController(deps: ApiDeps, cfg: CrawlConfig) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'crawl');
    let o = validateBody(crawlRequestSchema, req.body);
    if (o.prompt) {
      // The model proposes options; the request's own fields win; the crawl schema checks the result.
      const derived = await crawlOptionsFromPrompt(deps, req, { url: o.url, prompt: o.prompt, timeoutMs: cfg.promptTimeoutMs }, 'prompt');
      o = withPromptOptions(req.body as Record<string, unknown>, derived.options);
    }
    await checkScrapePolicy({ ...o.scrapeOptions, zeroDataRetention: o.zeroDataRetention || o.scrapeOptions.zeroDataRetention }, req.auth, deps.deployment);
    // A blocked seed fails the request; blocked links found later are skipped (activities/src/crawl/page.ts).
    checkTeamFeatures(req.auth, { threatProtection: o.scrapeOptions.threatProtection }, [o.url]);
    o.limit = crawlLimitWithin(o.limit, (req.body as { limit?: unknown }).limit == null, cfg.maxCrawlLimit);

    const id = randomUUID();
    noteLogIds(req, { jobId: id });
    // Zero data retention for the whole job (its flag) or for its pages (scrapeOptions): the same.
    const zdr = o.zeroDataRetention || keepsNoData(o.scrapeOptions);
    if (zdr) forgetUrlInLogs(req, o.url);
    const { url, ...options } = o;
    await insertCrawlJob(deps.db, {
      id,
      teamId: req.auth.teamId,
      kind: 'crawl',
      url,
      options,
      pageLimit: o.limit,
      zeroDataRetention: zdr,
    });
    await startJob(deps, crawlJob, { jobId: id, args: [{ jobId: id, kind: 'crawl', plan: planCrawl(o, cfg.defaultConcurrency, cfg.batchesPerRun) }] });
    return reply.send({ success: true, id, url: `${baseUrl(req, cfg.publicUrl)}/v2/crawl/${id}` });
  };
}

/**
 * The deployment's ceiling on a crawl's page count. Asked for more, the request is refused rather
 * than quietly doing less (as Firecrawl refuses a limit its credits cannot cover); an omitted
 * limit (Firecrawl's default, 10,000) is lowered to the ceiling instead.
 */
export function crawlLimitWithin(limit: number, omitted: boolean, max: number | undefined): number {
  if (max === undefined || limit <= max) return limit;
  if (omitted) return max;
  throw new WdsError('BAD_REQUEST', {
    // A deployment rule, not a type range: `custom`, so the envelope's error is this sentence (as a Firecrawl refine's is).
    details: [{ code: 'custom', path: ['limit'], message: `limit must be at most ${max} in this deployment (WDS_MAX_CRAWL_LIMIT); split the crawl or ask the operator to raise it` }],
  });
}

/** GET /v2/crawl/active: the team's running crawls. */
export function activeCrawlsController(deps: ApiDeps) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'crawl');
    const rows = await activeCrawls(deps.db, req.auth.teamId);
    return reply.send({ success: true, crawls: rows.map((r) => ({ id: r.id, teamId: r.teamId, url: r.url, options: r.options })) });
  };
}

/**
 * POST /v2/crawl/params-preview: the options a crawl `prompt` turns into, in Firecrawl's answer
 * shape (`data`: the URL and the options the model set), already validated as crawl options.
 * The model's tokens are billed (chargeParamsPreview).
 */
export function paramsPreviewController(deps: ApiDeps, cfg: CrawlConfig) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'crawl');
    const o = validateBody(crawlParamsPreviewSchema, req.body);
    const derived = await crawlOptionsFromPrompt(deps, req, { url: o.url, prompt: o.prompt, timeoutMs: cfg.promptTimeoutMs }, 'Crawl params preview');
    await chargeParamsPreview(deps, req.auth.teamId, derived);
    return reply.send({ success: true, data: { url: o.url, ...derived.options } });
  };
}
