import type { FastifyReply, FastifyRequest } from 'fastify';
import { acquireConcurrencySlot, admitRequest, countRequest, getTeamLimits, hashKey, releaseConcurrencySlot, teamCreditBalance, type Db, type LimitDefaults, type TeamLimits } from '@wds/db';
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

/** A v1 route (routes/v1.ts) counts as the v2 route it runs. */
const asV2 = (route: string | undefined) => route?.replace(/^\/v1\//, '/v2/');

export function limitClassOf(method: string, url: string | undefined): LimitClass {
  const route = asV2(url);
  if (route && method === 'POST' && JOB_CLASS[route]) return JOB_CLASS[route]!;
  if (route && method === 'GET' && /\/:id/.test(route)) return 'status';
  return 'other';
}

export interface LimitsConfig {
  /** Longest a scrape waits for a free concurrency slot before 429 Concurrency limit reached. */
  concurrencyQueueMs: number;
  /** Every team's limits unless its team_limits row says otherwise (WDS_RATE_LIMIT_*, WDS_MAX_CONCURRENT_SCRAPES, WDS_MAX_MONITORS, WDS_AGENT_MAX_CREDITS, WDS_INTERACT_SESSION_MINUTES). */
  defaults: LimitDefaults;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request waited for a concurrency slot (scrape metadata reports it). */
    concurrencyQueueMs?: number;
  }
}

/** A team's effective limits (defaults + its row), re-read every few seconds; `peek` answers only from what it holds. */
export type TeamLimitsReader = ((teamId: string) => Promise<TeamLimits>) & { peek(teamId: string): TeamLimits | undefined };

const LIMITS_FRESH_MS = 5_000;

export function teamLimitsReader(db: Db, defaults: LimitDefaults): TeamLimitsReader {
  const cache = new Map<string, { at: number; limits: TeamLimits }>();
  const peek = (teamId: string) => {
    const hit = cache.get(teamId);
    return hit && Date.now() - hit.at < LIMITS_FRESH_MS ? hit.limits : undefined;
  };
  const read = async (teamId: string) => {
    const fresh = peek(teamId);
    if (fresh) return fresh;
    const limits = await getTeamLimits(db, teamId, defaults);
    if (cache.size > 10_000) cache.clear();
    cache.set(teamId, { at: Date.now(), limits });
    return limits;
  };
  return Object.assign(read, { peek });
}

const BEARER = /^Bearer\s+([A-Za-z0-9._~+\/=-]{1,256})\s*$/i;

/**
 * Every /v2 route: authentication (a valid, unrevoked key, else 401 with the spec's exact body),
 * then the per-team limits (the deployment's defaults, overridden by team_limits rows in Postgres,
 * so every API process enforces the same ones): requests per minute per endpoint class (429 +
 * Retry-After), credits (402 on job routes once the team's credit limit is used up) and concurrent
 * scrapes (wait for a slot up to `concurrencyQueueMs`, then 429). Counts always come from Postgres.
 * When this process knows the key's team and its limits (a request of the last few seconds), the
 * key check, the count and the slot are one statement (admitRequest); else they are done one by one.
 */
export function admitRequests(db: Db, cfg: LimitsConfig, limitsOf: TeamLimitsReader) {
  /** Key hash → the team it authenticated for last (a key belongs to one team). */
  const teamOfKey = new Map<string, string>();
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const m = BEARER.exec(req.headers.authorization ?? '');
    if (!m) throw new WdsError('UNAUTHORIZED');
    const keyHash = hashKey(m[1]!);
    const cls = limitClassOf(req.method, req.routeOptions.url);
    const jobRoute = req.method === 'POST' && !!JOB_CLASS[asV2(req.routeOptions.url) ?? ''];
    const guess = teamOfKey.get(keyHash);
    const known = guess ? limitsOf.peek(guess) : undefined;
    // The slot comes after the credit check: with a credit limit, it is taken on its own below.
    const slot = known && needsSlot(cls, jobRoute, known) && known.creditLimit === null ? { max: known.maxConcurrency!, ttlMs: slotTtlMs(cfg) } : undefined;
    const a = await admitRequest(db, { keyHash, team: known && { id: guess!, cls, perMinute: known.ratePerMinute[cls] ?? undefined, slot } });
    if (!a.auth) throw new WdsError('UNAUTHORIZED');
    req.auth = a.auth;
    if (teamOfKey.size > 10_000) teamOfKey.clear();
    teamOfKey.set(keyHash, a.auth.teamId);
    const limits = a.asked ? known! : await limitsOf(a.auth.teamId);

    const perMinute = limits.ratePerMinute[cls];
    if (perMinute !== undefined && perMinute !== null) {
      const { count, retryAfterSeconds } = a.rate ?? (await countRequest(db, req.auth.teamId, cls));
      if (count > perMinute) {
        reply.header('Retry-After', String(retryAfterSeconds));
        throw new WdsError('RATE_LIMITED', { message: `Rate limit exceeded: ${perMinute} ${cls} requests per minute. Retry after ${retryAfterSeconds} s.` });
      }
    }
    if (!jobRoute) return;

    // POST /v2/scrape is checked once its body is read (scrapeCreditCheck): catalog mode answers its own 402.
    if (asV2(req.routeOptions.url) !== '/v2/scrape') await checkCredits(db, req.auth.teamId, limits);
    if (needsSlot(cls, jobRoute, limits)) await holdSlot(db, cfg, req, reply, limits.maxConcurrency!, a.slot);
  };
}

/** One row read (the ledger's running balance); reserved credits are spoken for. */
async function checkCredits(db: Db, teamId: string, limits: TeamLimits): Promise<void> {
  if (limits.creditLimit === null) return;
  const b = await teamCreditBalance(db, teamId);
  if (b.used + b.reserved >= limits.creditLimit) throw new WdsError('PAYMENT_REQUIRED');
}

/**
 * The 402 check of POST /v2/scrape, after the body is parsed: URL mode as every job route;
 * catalog mode reserves each call's price itself (402 `insufficient_credits`, nothing run), and
 * a replay of a finished request costs nothing, so it is not refused here.
 */
export function scrapeCreditCheck(db: Db, limitsOf: TeamLimitsReader) {
  return async (req: FastifyRequest) => {
    if (!req.auth) return;
    const body = req.body as Record<string, unknown> | undefined;
    if (body && typeof body === 'object' && ('catalog' in body || 'alexandria' in body)) return;
    await checkCredits(db, req.auth.teamId, await limitsOf(req.auth.teamId));
  };
}

const needsSlot = (cls: LimitClass, jobRoute: boolean, limits: TeamLimits) => jobRoute && cls === 'scrape' && limits.maxConcurrency !== null;

/** The slot outlives the request only if the API dies; then it expires (scrape timeout + margin). */
const slotTtlMs = (cfg: LimitsConfig) => Math.max(cfg.concurrencyQueueMs, 0) + 10 * 60_000;

/** A concurrency slot for the request (`taken`: by admitRequest already), waiting for one up to concurrencyQueueMs; released when the response is sent. */
async function holdSlot(db: Db, cfg: LimitsConfig, req: FastifyRequest, reply: FastifyReply, max: number, taken: string | null | undefined) {
  const t0 = Date.now();
  for (let waited = false; ; waited = true) {
    const slot = !waited && taken !== undefined ? taken : await acquireConcurrencySlot(db, req.auth.teamId, max, slotTtlMs(cfg));
    if (slot) {
      if (waited) req.concurrencyQueueMs = Date.now() - t0;
      // Released when the response is sent (or the client went away).
      reply.raw.once('close', () => void releaseConcurrencySlot(db, slot).catch(() => {}));
      return;
    }
    if (Date.now() - t0 >= cfg.concurrencyQueueMs) {
      reply.header('Retry-After', '5');
      throw new WdsError('CONCURRENCY_LIMITED', {
        message: `Concurrency limit reached: ${max} scrapes at once, and none finished within ${cfg.concurrencyQueueMs} ms.`,
      });
    }
    await new Promise((r) => setTimeout(r, 100 + Math.random() * 100));
  }
}
