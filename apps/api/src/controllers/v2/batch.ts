import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { batchScrapeRequestSchema, httpUrl, keepsNoData } from '@wds/contracts';
import { findJobByIdempotencyKey, insertCrawlJob, jobStatus } from '@wds/db';
import { WdsError } from '@wds/errors';
import { crawlUrlKey } from '@wds/crawl';
import type { ApiDeps } from '../../deps';
import { forgetUrlInLogs, noteLogIds } from '../../logging';
import { requireScope } from '../../middleware/auth';
import { baseUrl } from '../../services/base-url';
import { planCrawl } from '../../services/crawl-plan';
import { startJob } from '../../services/jobs';
import { batchJob } from '@wds/workflows/job-specs';
import { checkScrapePolicy } from '../../services/scrape-policy';
import { checkTeamFeatures } from '../../services/team-features';
import type { CrawlConfig } from './crawl';
import { validateBody } from './validate';

const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * POST /v2/batch/scrape: the job and its URL list go into Postgres in one transaction before the
 * workflow starts (the workflow gets only the job id); a failed start fails the job and the request. Invalid URLs are reported in
 * `invalidURLs` with ignoreInvalidURLs (default), else the request is refused naming them.
 */
export function batchScrapeController(deps: ApiDeps, cfg: CrawlConfig) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'scrape');
    const o = validateBody(batchScrapeRequestSchema, req.body);
    const idem = req.headers['x-idempotency-key'];
    if (idem !== undefined && (typeof idem !== 'string' || !IDEMPOTENCY_KEY.test(idem))) {
      throw new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_format', path: ['x-idempotency-key'], message: 'x-idempotency-key must be 1 to 128 letters, digits, ".", "_", ":" or "-"' }] });
    }
    if (o.appendToId) {
      throw new WdsError('FEATURE_NOT_AVAILABLE', { code: 'FEATURE_NOT_AVAILABLE', message: "'appendToId' is not available in this deployment: start a new batch instead." });
    }
    const { urls: rawUrls, webhook, maxConcurrency, ignoreInvalidURLs, appendToId: _a, origin: _o, integration: _i, ...scrapeOptions } = o;
    await checkScrapePolicy(scrapeOptions, req.auth, deps.deployment);

    const valid: string[] = [];
    const invalid: string[] = [];
    const details: { code: string; path: (string | number)[]; message: string }[] = [];
    rawUrls.forEach((u, i) => {
      const r = httpUrl.safeParse(u);
      if (r.success) valid.push(r.data);
      else {
        invalid.push(typeof u === 'string' ? u : JSON.stringify(u));
        details.push({ code: 'invalid_url', path: ['urls', i], message: `urls[${i}] must be an absolute http(s) URL` });
      }
    });
    if (invalid.length && !ignoreInvalidURLs) throw new WdsError('INVALID_URL', { details });
    if (!valid.length) throw new WdsError('INVALID_URL', { message: 'Invalid URL: no valid URL in urls', details });
    // Threat protection: a blocked URL refuses the batch (403 unsafe_domain_blocked naming it) before anything runs.
    checkTeamFeatures(req.auth, { threatProtection: scrapeOptions.threatProtection }, valid);

    const base = baseUrl(req, cfg.publicUrl);
    const plan = planCrawl({ maxConcurrency, scrapeOptions }, cfg.defaultConcurrency, cfg.batchesPerRun);
    const answer = (id: string) => reply.send({ success: true, id, url: `${base}/v2/batch/scrape/${id}`, ...(ignoreInvalidURLs ? { invalidURLs: invalid } : {}) });
    /** The job a request with this key started: the first request may have died between storing it and starting it. */
    const rescue = async (existing: string) => {
      // Starting again joins a running workflow, and rescues a job never started; an ended job is left as it is.
      if ((await jobStatus(deps.db, existing)) === 'scraping') await startJob(deps, batchJob, { jobId: existing, args: [{ jobId: existing, kind: 'batch', plan }] });
      return answer(existing);
    };
    const existing = idem ? await findJobByIdempotencyKey(deps.db, req.auth.teamId, idem) : null;
    if (existing) return rescue(existing);

    const id = randomUUID();
    noteLogIds(req, { jobId: id });
    const zdr = keepsNoData(o);
    if (zdr) for (const u of valid) forgetUrlInLogs(req, u);
    const held = await insertCrawlJob(
      deps.db,
      {
        id,
        teamId: req.auth.teamId,
        kind: 'batch',
        url: null,
        options: { ...scrapeOptions, webhook: webhook ?? null, maxConcurrency: maxConcurrency ?? null },
        pageLimit: valid.length,
        zeroDataRetention: zdr,
        idempotencyKey: idem ?? null,
      },
      valid.map((url) => ({ url, key: crawlUrlKey(url), depth: 0, external: false })),
    );
    if (held !== id) return rescue(held);
    await startJob(deps, batchJob, { jobId: id, args: [{ jobId: id, kind: 'batch', plan }] });
    return answer(id);
  };
}
