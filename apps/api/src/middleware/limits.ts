import type { FastifyReply, FastifyRequest } from 'fastify';
import { acquireConcurrencySlot, countRequest, getTeamLimits, releaseConcurrencySlot, teamCreditBalance, type Db, type LimitDefaults, type TeamLimits } from '@wds/db';
import { WdsError } from '@wds/errors';

type LimitClass = 'scrape' | 'crawl' | 'batch' | 'map' | 'parse' | 'status' | 'other';

/** POST routes that start billable work, by route pattern → endpoint class. */
const JOB_CLASS: Record<string, LimitClass> = {
  '/v2/scrape': 'scrape',
  '/v2/crawl': 'crawl',
  '/v2/batch/scrape': 'batch',
  '/v2/map': 'map',
  // Search may scrape its results: it counts against the scrape budget.
  '/v2/search': 'scrape',
  '/v2/parse': 'parse',
  // An extract is a frontier job like a crawl: the same per-minute class, and 402 once credits are used up.
  '/v2/extract': 'crawl',
  // Agent jobs: rated as `other`, but a team whose credits are used up gets 402 before a run starts.
  '/v2/agent': 'other',
  // Interact calls bill browser minutes: 402 once credits are used up. A session's concurrency slot is taken by its controller.
  '/v2/scrape/:id/interact': 'other',
};

export function limitClassOf(method: string, route: string | undefined): LimitClass {
  if (route && method === 'POST' && JOB_CLASS[route]) return JOB_CLASS[route]!;
  if (route && method === 'GET' && /\/:id/.test(route)) return 'status';
  return 'other';
}

export interface LimitsConfig {
  /** Longest a scrape waits for a free concurrency slot before 429 Concurrency limit reached. */
  concurrencyQueueMs: number;
  /** Every team's limits unless its team_limits row says otherwise (WDS_RATE_LIMIT_*, WDS_MAX_CONCURRENT_SCRAPES). */
  defaults: LimitDefaults;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request waited for a concurrency slot (scrape metadata reports it). */
    concurrencyQueueMs?: number;
  }
}

/** A team's effective limits (defaults + its row), re-read every few seconds. */
export type TeamLimitsReader = (teamId: string) => Promise<TeamLimits>;

export function teamLimitsReader(db: Db, defaults: LimitDefaults): TeamLimitsReader {
  const cache = new Map<string, { at: number; limits: TeamLimits }>();
  return async (teamId) => {
    const hit = cache.get(teamId);
    if (hit && Date.now() - hit.at < 5_000) return hit.limits;
    const limits = await getTeamLimits(db, teamId, defaults);
    if (cache.size > 10_000) cache.clear();
    cache.set(teamId, { at: Date.now(), limits });
    return limits;
  };
}

/**
 * Per-team limits (the deployment's defaults, overridden by team_limits rows in Postgres, so every
 * API process enforces the same ones): requests per minute per endpoint class (429 + Retry-After),
 * credits (402 on job routes once the team's credit limit is used up) and concurrent scrapes (wait
 * for a slot up to `concurrencyQueueMs`, then 429). Counts always come from Postgres.
 */
export function enforceLimits(db: Db, cfg: LimitsConfig, limitsOf: TeamLimitsReader) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (!req.auth) return;
    const cls = limitClassOf(req.method, req.routeOptions.url);
    const limits = await limitsOf(req.auth.teamId);

    const perMinute = limits.ratePerMinute[cls];
    if (perMinute !== undefined && perMinute !== null) {
      const { count, retryAfterSeconds } = await countRequest(db, req.auth.teamId, cls);
      if (count > perMinute) {
        reply.header('Retry-After', String(retryAfterSeconds));
        throw new WdsError('RATE_LIMITED', { message: `Rate limit exceeded: ${perMinute} ${cls} requests per minute. Retry after ${retryAfterSeconds} s.` });
      }
    }
    if (!JOB_CLASS[req.routeOptions.url ?? ''] || req.method !== 'POST') return;

    if (limits.creditLimit !== null) {
      // One row read (the ledger's running balance); reserved credits are spoken for.
      const b = await teamCreditBalance(db, req.auth.teamId);
      if (b.used + b.reserved >= limits.creditLimit) throw new WdsError('PAYMENT_REQUIRED');
    }
    if (cls === 'scrape' && limits.maxConcurrency !== null) {
      const t0 = Date.now();
      // The slot outlives the request only if the API dies; then it expires (scrape timeout + margin).
      const ttlMs = Math.max(cfg.concurrencyQueueMs, 0) + 10 * 60_000;
      for (let waited = false; ; waited = true) {
        const slot = await acquireConcurrencySlot(db, req.auth.teamId, limits.maxConcurrency, ttlMs);
        if (slot) {
          if (waited) req.concurrencyQueueMs = Date.now() - t0;
          // Released when the response is sent (or the client went away).
          reply.raw.once('close', () => void releaseConcurrencySlot(db, slot).catch(() => {}));
          return;
        }
        if (Date.now() - t0 >= cfg.concurrencyQueueMs) {
          reply.header('Retry-After', '5');
          throw new WdsError('CONCURRENCY_LIMITED', {
            message: `Concurrency limit reached: ${limits.maxConcurrency} scrapes at once, and none finished within ${cfg.concurrencyQueueMs} ms.`,
          });
        }
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 100));
      }
    }
  };
}
