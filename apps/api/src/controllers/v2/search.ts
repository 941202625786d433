import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { keepsNoData, searchRequestSchema, type ScrapeOptions, type SearchRequest } from '@wds/contracts';
import { chargeCredits, insertCrawlJob, jobStatus, liveCounters, markJobCancelled, markJobDelivered, pageOfDocuments } from '@wds/db';
import { WdsError } from '@wds/errors';
import { allowedUrls } from '@wds/fetch';
import { crawlUrlKey } from '@wds/crawl';
import { parseTbs, runSearch, searchCredits, usableUrl, type SearchProvider, type SearchQuery, type SearchResults, type SearchSource } from '@wds/search';
import type { ApiDeps } from '../../deps';
import { forgetUrlInLogs, noteLogIds } from '../../logging';
import { requireScope } from '../../middleware/auth';
import { searchTools } from '../../services/search-tools';
import { planCrawl } from '../../services/crawl-plan';
import { cancelJob, startJob } from '../../services/jobs';
import { batchJob } from '@wds/workflows/job-specs';
import { checkScrapePolicy } from '../../services/scrape-policy';
import type { CrawlConfig } from './crawl';
import { validateBody } from './validate';
import { checkTeamFeatures } from '../../services/team-features';

type Result = { url?: string; [k: string]: unknown };

/**
 * POST /v2/search: the configured provider (SearXNG, the own index, both) answers each source
 * asked for, under the request's timeout; 2 credits per 10 results go to the ledger (key
 * search:<id>). With scrapeOptions every result URL is scraped by a batch job (the durable
 * frontier engine, pages in parallel, billed per page as any batch) that the request waits for
 * within what is left of its timeout; each result then carries its page's document.
 */
export function searchController(deps: ApiDeps, cfg: CrawlConfig, provider: SearchProvider) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'search');
    const started = Date.now();
    const o = validateBody(searchRequestSchema, req.body);
    const tbs = o.tbs ? parseTbs(o.tbs) : null;
    if (tbs && 'error' in tbs) throw new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_tbs', path: ['tbs'], message: tbs.error }] });
    await checkOptions(req, o, deps);

    const id = randomUUID();
    noteLogIds(req, { jobId: id });
    const q: SearchQuery = {
      query: o.query,
      limit: o.limit,
      sources: o.sources,
      categories: o.categories,
      includeDomains: o.includeDomains,
      excludeDomains: o.excludeDomains,
      tbs,
      location: o.location,
      country: o.country,
      safe: o.safe,
      highlights: o.highlights,
      teamId: req.auth.teamId,
    };
    const found: SearchResults = o.sources.length ? await runSearch(provider, q, o.timeout) : { warnings: [] };
    const warnings = [...found.warnings];
    const data: Partial<Record<SearchSource, Result[]>> = {};
    for (const source of o.sources) {
      const rows = (found[source] ?? []) as unknown as Result[];
      const kept = o.ignoreInvalidURLs ? rows.filter((r) => typeof r.url === 'string' && usableUrl(r.url)) : rows;
      // Threat protection: blocked results are removed, not surfaced and refused (Firecrawl's docs).
      data[source] = allowedUrls(kept, (r) => String(r.url ?? ''), o.threatProtection);
    }
    const count = Object.values(data).reduce((n, rows) => n + rows.length, 0);
    const credits = searchCredits(count);
    if (credits > 0) await chargeCredits(deps.db, { teamId: req.auth.teamId, jobId: id, kind: 'search', amount: credits, key: `search:${id}` });

    let scrapeCredits = 0;
    if (o.scrapeOptions && count > 0) {
      const remaining = o.timeout - (Date.now() - started);
      const s = await scrapeResults(deps, cfg, req, o.scrapeOptions, data, Math.max(remaining, 1_000));
      scrapeCredits = s.credits;
      warnings.push(...s.warnings);
    }
    if (o.alexandria || o.domainTools) (data as Record<string, unknown>).tools = await searchTools(deps.db, o, data);
    return reply.send({
      success: true,
      data,
      ...(warnings.length ? { warning: warnings.join(' ') } : {}),
      id,
      creditsUsed: credits + scrapeCredits,
    });
  };
}

/** A search under zero data retention (enterprise zdr, or results scraped with it) keeps the catalog out, as a scrape's domainTools does (spec: 403). */
const zeroDataRetention = (o: SearchRequest) => !!o.enterprise?.includes('zdr') || !!o.scrapeOptions?.zeroDataRetention;

async function checkOptions(req: FastifyRequest, o: SearchRequest, deps: ApiDeps): Promise<void> {
  if (o.enterprise?.some((e) => e !== 'default') && !req.auth.flags.zeroDataRetention) {
    throw new WdsError('FORBIDDEN', { message: 'Forbidden: enterprise zero data retention search is not enabled for this team. Ask the operator to enable it.', code: 'ZDR_NOT_ENABLED' });
  }
  checkTeamFeatures(req.auth, o);
  // Firecrawl's answer for a team without its provider catalogue (Alexandria): firecrawl-mcp asks
  // for it by default and, on exactly this 403, searches the web alone.
  if ((o.alexandria || o.domainTools) && (!req.auth.flags.catalog || zeroDataRetention(o))) {
    throw new WdsError('FORBIDDEN', { message: 'This endpoint is not enabled for this team.', code: 'CATALOG_NOT_ENABLED' });
  }
  // Result pages are scraped as batch pages: the same options are available as for a batch.
  if (o.scrapeOptions) {
    try {
      await checkScrapePolicy(o.scrapeOptions, req.auth, deps.deployment);
    } catch (e) {
      if (e instanceof WdsError && Array.isArray(e.details)) {
        throw new WdsError(e.kind, { message: e.message, code: e.code, details: (e.details as { path?: unknown[] }[]).map((d) => ({ ...d, path: ['scrapeOptions', ...(d.path ?? [])] })) });
      }
      throw e;
    }
  }
}

/**
 * Scrapes every result URL (once, whatever sources it appears in) as one batch job and waits for
 * it until `waitMs`; results get their document's fields. Pages not done by then are cancelled and
 * reported in the warning; a failed page leaves its result as the provider gave it.
 */
async function scrapeResults(
  deps: ApiDeps,
  cfg: CrawlConfig,
  req: FastifyRequest,
  scrapeOptions: ScrapeOptions,
  data: Partial<Record<SearchSource, Result[]>>,
  waitMs: number,
): Promise<{ credits: number; warnings: string[] }> {
  const urls = new Map<string, string>();
  for (const rows of Object.values(data)) {
    for (const r of rows) if (typeof r.url === 'string' && usableUrl(r.url) && !urls.has(crawlUrlKey(r.url))) urls.set(crawlUrlKey(r.url), r.url);
  }
  if (!urls.size) return { credits: 0, warnings: [] };
  const jobId = randomUUID();
  const zdr = keepsNoData(scrapeOptions);
  if (zdr) for (const u of urls.values()) forgetUrlInLogs(req, u);
  await insertCrawlJob(
    deps.db,
    {
      id: jobId,
      teamId: req.auth.teamId,
      kind: 'batch',
      url: null,
      options: { ...scrapeOptions, webhook: null, maxConcurrency: null },
      pageLimit: urls.size,
      zeroDataRetention: zdr,
      idempotencyKey: null,
    },
    [...urls].map(([key, url]) => ({ url, key, depth: 0, external: false })),
  );
  await startJob(deps, batchJob, { jobId, args: [{ jobId, kind: 'batch', plan: planCrawl({}, cfg.defaultConcurrency, cfg.batchesPerRun) }] });

  const deadline = Date.now() + waitMs;
  let status = await jobStatus(deps.db, jobId);
  for (let pause = 50; status === 'scraping' && Date.now() < deadline; pause = Math.min(pause * 2, 250)) {
    await new Promise((r) => setTimeout(r, Math.min(pause, Math.max(deadline - Date.now(), 0))));
    status = await jobStatus(deps.db, jobId);
  }
  const warnings: string[] = [];
  if (status === 'scraping' && (await markJobCancelled(deps.db, jobId))) {
    await cancelJob(deps, batchJob, jobId).catch(() => {});
  }

  const docs = new Map<string, Record<string, unknown>>();
  for (let skip = 0; ; ) {
    const page = await pageOfDocuments(deps.db, jobId, skip, 50 * 1024 * 1024);
    for (const d of page.docs as { metadata?: { sourceURL?: string } }[]) {
      const source = d.metadata?.sourceURL;
      if (typeof source === 'string') docs.set(crawlUrlKey(source), d as Record<string, unknown>);
    }
    skip += page.docs.length;
    if (!page.more || !page.docs.length) break;
  }
  let missing = 0;
  for (const rows of Object.values(data)) {
    rows.forEach((r, i) => {
      const doc = typeof r.url === 'string' && usableUrl(r.url) ? docs.get(crawlUrlKey(r.url)) : undefined;
      if (doc) rows[i] = { ...r, ...doc };
      else missing++;
    });
  }
  if (missing) {
    warnings.push(status === 'scraping'
      ? `${missing} result(s) were not scraped within the timeout; they carry the search fields only.`
      : `${missing} result(s) could not be scraped (see GET /v2/batch/scrape/${jobId}/errors); they carry the search fields only.`);
  }
  const credits = (await liveCounters(deps.db, jobId)).creditsUsed;
  // Zero data retention: the pages are in this answer; the batch behind it keeps nothing.
  if (zdr) await markJobDelivered(deps.db, jobId);
  return { credits, warnings };
}

export type { SearchResults };
