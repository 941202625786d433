import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { keepsNoData, scrapeUrlRequestSchema, type ScrapeDocument } from '@wds/contracts';
import { deleteScrapeJob, insertCompletedScrape } from '@wds/db';
import { WdsError } from '@wds/errors';
import { creditsUsed } from '@wds/metrics';
import type { ApiDeps } from '../../deps';
import { forgetUrlInLogs, noteLogIds } from '../../logging';
import { requireScope } from '../../middleware/auth';
import { domainToolsOf } from '../../services/domain-tools';
import { answerFromCache } from '../../services/scrape-cache';
import { checkScrapePolicy } from '../../services/scrape-policy';
import { runScrapeJob } from '../../services/scrape-run';
import { catalogMode } from './scrape-catalog';
import { validateBody } from './validate';

/** Firecrawl's fields for a scrape that waited for a concurrency slot (see middleware/limits). */
function withQueueMetadata(req: FastifyRequest, d: ScrapeDocument): ScrapeDocument {
  if (req.concurrencyQueueMs === undefined) return d;
  return { ...d, metadata: { ...d.metadata, concurrencyLimited: true, concurrencyQueueDurationMs: req.concurrencyQueueMs } as ScrapeDocument['metadata'] };
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** `x-request-id` (used by catalog mode) is checked in both modes: a malformed header is refused, never ignored. */
function checkRequestId(req: FastifyRequest) {
  const requestId = req.headers['x-request-id'];
  if (requestId !== undefined && (typeof requestId !== 'string' || !REQUEST_ID.test(requestId))) {
    throw new WdsError('BAD_REQUEST', {
      details: [{ code: 'invalid_format', path: ['x-request-id'], message: 'x-request-id must be 1 to 128 letters, digits, ".", "_", ":" or "-"' }],
    });
  }
}

/** POST /v2/scrape: URL mode (cache, else a scrape workflow) or catalog mode. */
export function scrapeController(deps: ApiDeps) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'scrape');
    checkRequestId(req);
    const body = req.body as Record<string, unknown> | undefined;
    if (body && typeof body === 'object' && ('catalog' in body || 'alexandria' in body)) return catalogMode(deps, req, reply);

    const o = validateBody(scrapeUrlRequestSchema, body);
    await checkScrapePolicy(o, req.auth, deps.deployment);
    const scrapeId = randomUUID();
    // Zero-data-retention and lockdown requests leave no URL behind.
    const keepNothing = keepsNoData(o);
    noteLogIds(req, { scrapeId });
    if (keepNothing) forgetUrlInLogs(req, o.url);

    const cached = await answerFromCache(deps.db, o, scrapeId, deps.deployment?.llm.ok ?? false);
    if (cached && !cached.worker) {
      // The row (unless nothing may be kept) and the charge, which zero data retention keeps too.
      await insertCompletedScrape(deps.db, { id: scrapeId, teamId: req.auth.teamId, url: o.url, options: o, document: cached.document, creditsUsed: cached.creditsUsed, keepRow: !keepNothing });
      creditsUsed.inc({ kind: 'scrape' }, cached.creditsUsed);
      return reply.send({ success: true, data: await withTools(cached.document) });
    }

    // A cached PDF still needs converting: the job reads the cache (cacheLookup) instead of fetching.
    const options = cached?.worker ? { ...o, cacheLookup: cached.worker } : o;
    let document: ScrapeDocument;
    try {
      document = await runScrapeJob(deps, { id: scrapeId, teamId: req.auth.teamId, url: keepNothing ? null : o.url, options }, deps.scrapeDispatch);
    } finally {
      // Zero data retention and lockdown (here only through a cached PDF) leave nothing behind, even on failure.
      if (keepNothing) await deleteScrapeJob(deps.db, scrapeId);
    }
    return reply.send({ success: true, data: await withTools(document) });

    /** domainTools: the catalog's tools for the page's domain (free; never stored with the document). */
    async function withTools(d: ScrapeDocument) {
      const out = withQueueMetadata(req, d);
      return o.domainTools ? { ...out, tools: await domainToolsOf(deps.db, out, o.toolDetail ?? 'summary') } : out;
    }
  };
}
