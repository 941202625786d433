import { WdsError, ScrapeCodes } from '@wds/errors';
import { limitsResolver, type OriginLimit, type OriginLimitRule } from './limits';
import { parseRetryAfter } from './retry-after';

/**
 * The one place every outbound page request takes a slot of its origin's politeness budget
 * (HTTP engine: each hop of fetchPage; browser engine: each render, through the worker's gated
 * renderer). The budget itself is shared by the whole deployment (a store in Postgres); this
 * side is the process's: a fast path that costs no round trip when nothing can bind (no cap, no
 * interval, the origin not in backoff), one asking taker per origin (waiters queue here, not in
 * Postgres), the backoff map every worker keeps from the store's announcements, and the
 * reading of answers (429/503 and Retry-After, bursts of connection resets, recovery on success).
 */

export interface PolitenessHints {
  /** robots.txt Crawl-delay (ms) of a job that respects robots: raises the origin's interval for this request. */
  minIntervalMs?: number;
}

export interface RequestOutcome {
  status?: number;
  headers?: Record<string, string | string[] | undefined>;
  error?: unknown;
}

export interface OriginTicket {
  /** Ms the request waited for its slot and its turn (0 on the fast path). */
  readonly waitedMs: number;
  /**
   * The request ended (its body read, or failed): frees the slot and reads the answer. Resolves
   * once a 429/503's backoff is recorded, so the caller may ask `retryAt` right after.
   */
  end(outcome: RequestOutcome): Promise<void>;
}

export interface OriginGate {
  enter(url: URL, o?: { hints?: PolitenessHints; deadlineMs?: number; signal?: AbortSignal }): Promise<OriginTicket>;
  /** Epoch ms before which the origin takes no request (a backoff this process knows of), or 0. */
  retryAt(origin: string): number;
  /** An announcement from the store (another worker's backoff step, up or down). */
  noteBackoff(origin: string, inMs: number, level: number): void;
}

/** The deployment-wide state: packages/db/src/origin-budget.ts, wired by the worker. */
export interface OriginBudgetStore {
  take(t: { origin: string; cap: number; intervalMs: number; recoveryMs: number; deadlineInMs: number | null }): Promise<{ granted: boolean; startInMs: number | null; backoffInMs: number | null; level: number; inFlight: number }>;
  release(origin: string): Promise<void>;
  backoff(b: { origin: string; retryAfterMs: number | null; startedMsAgo: number; baseMs: number; maxMs: number; reason: string }): Promise<{ backoffInMs: number; level: number }>;
  recover(origin: string, stepMs: number): Promise<number | null>;
  /**
   * A granted request spaced by an interval is about to start, `reservedMsAgo` after its reserved
   * start: 0 to go, else ms until the later start it was given (it woke too late to keep the gap
   * to the request reserved after it).
   */
  begin(b: { origin: string; reservedMsAgo: number; intervalMs: number; recoveryMs: number; toleranceMs: number }): Promise<number>;
}

/** Metrics hook (the worker wires @wds/metrics' politenessMetrics): what the gate saw, per origin. */
export interface PolitenessObserver {
  /** A request of this process started (+1) or ended (-1) at the origin. */
  inFlight?(origin: string, delta: 1 | -1): void;
  waited?(origin: string, ms: number): void;
  backedOff?(origin: string, reason: string, inMs: number, level: number): void;
  answered?(origin: string, status: number): void;
}

export interface PolitenessConfig {
  defaults: OriginLimit;
  overrides?: OriginLimitRule[];
  /** First exponential backoff step without Retry-After (doubled per step, jittered ±50%). */
  backoffBaseMs: number;
  /** No backoff (Retry-After included) longer than this. */
  backoffMaxMs: number;
  /** While recovering, starts are spaced by this doubled per step left; one step is removed per this much time of successes. */
  recoveryMs: number;
  /** robots.txt Crawl-delay is honoured up to this. */
  maxCrawlDelayMs: number;
  /** This many connection resets within `resetWindowMs` count as one 503. */
  resetBurst: number;
  resetWindowMs: number;
  observer?: PolitenessObserver;
}

const POLL_MIN_MS = 10;
/** A spaced start may come this late (and at most a quarter of its interval) before it gives its turn to the next one. */
const START_TOLERANCE_MS = 25;
/** Turns a late start gives away before it goes regardless (a process that is always late must still make progress). */
const MAX_RESCHEDULES = 3;
const POLL_MAX_MS = 250;
const RELEASE_TRIES = 3;

interface Waiter {
  intervalMs: number;
  deadlineMs: number | null;
  enqueuedAt: number;
  /** It was made to wait (a slot refused, a start in the future, a backoff): only then is its wait reported. */
  held?: boolean;
  signal?: AbortSignal;
  resolve(t: OriginTicket): void;
  reject(e: unknown): void;
  gone?: boolean;
}

interface OriginQueue {
  waiters: Waiter[];
  taking: boolean;
  pollMs: number;
  timer?: NodeJS.Timeout;
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ERR_STREAM_PREMATURE_CLOSE']);

export function createOriginGate(store: OriginBudgetStore, config: PolitenessConfig): OriginGate {
  const limitsOf = limitsResolver(config.defaults, config.overrides ?? []);
  const backoffs = new Map<string, { untilMs: number; level: number }>();
  const queues = new Map<string, OriginQueue>();
  const resets = new Map<string, number[]>();
  /** When this process last started a request at each slow-path origin: a start the event loop made late must not crowd the next. */
  const lastStart = new Map<string, number>();
  const recovering = new Map<string, number>();
  const obs = config.observer;

  const retryAt = (origin: string) => {
    const b = backoffs.get(origin);
    return b && b.untilMs > Date.now() ? b.untilMs : 0;
  };
  const noteBackoff = (origin: string, inMs: number, level: number) => {
    if (level <= 0 && inMs <= 0) backoffs.delete(origin);
    else backoffs.set(origin, { untilMs: Date.now() + Math.max(0, inMs), level });
  };

  const timeoutError = (origin: string, lim: OriginLimit, intervalMs: number, deadlineMs: number | null, enqueuedAt: number) => {
    const held = retryAt(origin);
    const why = [
      lim.maxInFlight ? `at most ${lim.maxInFlight} request${lim.maxInFlight === 1 ? '' : 's'} at once` : '',
      intervalMs ? `${intervalMs} ms between requests` : '',
      held ? `backing off until ${new Date(held).toISOString()} after the site asked to slow down` : backoffs.has(origin) ? 'recovering from a backoff' : '',
    ].filter(Boolean);
    return new WdsError('REQUEST_TIMEOUT', {
      code: ScrapeCodes.TIMEOUT,
      retryable: false,
      message: `Request Timeout: the request to ${origin} would wait for the site's politeness budget (${why.join(', ') || 'its turn'}) beyond its timeout`,
      details: { origin, waitedMs: Date.now() - enqueuedAt, ...(deadlineMs ? { timeoutLeftMs: Math.max(0, deadlineMs - enqueuedAt) } : {}) },
    });
  };

  /** Reads the answer: backoff on 429/503 and bursts of resets, a recovery step on success. */
  const readOutcome = async (origin: string, startedAt: number, o: RequestOutcome): Promise<void> => {
    const status = o.status;
    if (status !== undefined) obs?.answered?.(origin, status);
    let reason: string | null = null;
    let retryAfterMs: number | null = null;
    if (status === 429 || status === 503) {
      reason = String(status);
      retryAfterMs = parseRetryAfter(o.headers?.['retry-after']);
    } else if (o.error && RESET_CODES.has(errorCode(o.error))) {
      const now = Date.now();
      const seen = (resets.get(origin) ?? []).filter((t) => now - t < config.resetWindowMs);
      seen.push(now);
      if (seen.length >= config.resetBurst) {
        resets.delete(origin);
        reason = 'connection resets';
      } else resets.set(origin, seen);
    }
    if (reason) {
      try {
        const r = await store.backoff({ origin, retryAfterMs, startedMsAgo: Date.now() - startedAt, baseMs: config.backoffBaseMs, maxMs: config.backoffMaxMs, reason });
        noteBackoff(origin, r.backoffInMs, r.level);
        obs?.backedOff?.(origin, reason, r.backoffInMs, r.level);
      } catch {
        // Postgres unreachable: this process still backs off for the window it can tell.
        noteBackoff(origin, Math.min(retryAfterMs ?? config.backoffBaseMs, config.backoffMaxMs), (backoffs.get(origin)?.level ?? 0) + 1);
      }
      return;
    }
    const b = backoffs.get(origin);
    if (status !== undefined && b && b.untilMs <= Date.now()) {
      const last = recovering.get(origin) ?? 0;
      if (Date.now() - last < config.recoveryMs) return;
      recovering.set(origin, Date.now());
      const level = await store.recover(origin, config.recoveryMs).catch(() => null);
      if (level !== null) noteBackoff(origin, 0, level);
      if (recovering.size > 10_000) recovering.clear();
    }
  };

  /** Ends a ticket once: the in-flight count, then (on the slow path) the slot. */
  const ender = (origin: string, startedAt: number, freeSlot: boolean) => {
    obs?.inFlight?.(origin, 1);
    let ended = false;
    return (o: RequestOutcome) => {
      if (!ended) {
        ended = true;
        obs?.inFlight?.(origin, -1);
        if (freeSlot) release(origin);
      }
      return readOutcome(origin, startedAt, o);
    };
  };

  const fastTicket = (origin: string): OriginTicket => ({ waitedMs: 0, end: ender(origin, Date.now(), false) });

  const release = (origin: string, tries = 0): void => {
    store.release(origin).then(
      () => pump(origin),
      () => (tries + 1 < RELEASE_TRIES ? setTimeout(() => release(origin, tries + 1), 100 * (tries + 1)) : pump(origin)),
    );
  };

  const slowTicket = (origin: string, w: Waiter): OriginTicket => {
    const startedAt = Date.now();
    // The round trip of a slot granted at once is no wait.
    const waitedMs = w.held ? startedAt - w.enqueuedAt : 0;
    if (waitedMs > 0) obs?.waited?.(origin, waitedMs);
    return { waitedMs, end: ender(origin, startedAt, true) };
  };

  /** A granted waiter waits for its reserved start, then for any backoff announced meanwhile. */
  const start = async (origin: string, w: Waiter, startInMs: number, lim: OriginLimit) => {
    try {
      let reservedAt = Date.now() + startInMs;
      if (startInMs > 0) {
        w.held = true;
        await sleep(startInMs, w.signal);
      }
      for (let held = retryAt(origin); held > Date.now(); held = retryAt(origin)) {
        w.held = true;
        if (w.deadlineMs !== null && held > w.deadlineMs) throw timeoutError(origin, lim, w.intervalMs, w.deadlineMs, w.enqueuedAt);
        await sleep(held - Date.now(), w.signal);
      }
      // Spaced starts are confirmed in the store: one that woke late (a busy event loop) must not
      // crowd the start reserved after it across the deployment.
      const spaced = w.intervalMs > 0 || (backoffs.get(origin)?.level ?? 0) > 0;
      for (let n = 0; spaced && n <= MAX_RESCHEDULES; n++) {
        const toleranceMs = n === MAX_RESCHEDULES ? 2 ** 31 - 1 : Math.min(START_TOLERANCE_MS, w.intervalMs / 4);
        // Postgres unreachable: the reservation stands.
        const again = await store.begin({ origin, reservedMsAgo: Date.now() - reservedAt, intervalMs: w.intervalMs, recoveryMs: config.recoveryMs, toleranceMs }).catch(() => 0);
        if (!again) break;
        w.held = true;
        reservedAt = Date.now() + again;
        if (w.deadlineMs !== null && reservedAt > w.deadlineMs) throw timeoutError(origin, lim, w.intervalMs, w.deadlineMs, w.enqueuedAt);
        await sleep(again, w.signal);
      }
      // The reservation spaced the starts; a timer that fired late moved the previous one closer.
      const since = Date.now() - (lastStart.get(origin) ?? 0);
      if (w.intervalMs && since < w.intervalMs) {
        w.held = true;
        await sleep(w.intervalMs - since, w.signal);
      }
      lastStart.set(origin, Date.now());
      if (lastStart.size > 10_000) lastStart.clear();
      w.resolve(slowTicket(origin, w));
    } catch (e) {
      release(origin);
      w.reject(e);
    }
  };

  const pump = (origin: string): void => {
    const q = queues.get(origin);
    if (!q || q.taking) return;
    while (q.waiters[0]?.gone) q.waiters.shift();
    const w = q.waiters[0];
    if (!w) {
      queues.delete(origin);
      return;
    }
    clearTimeout(q.timer);
    q.timer = undefined;
    const lim = limitsOf(origin);
    if (w.deadlineMs !== null && Date.now() >= w.deadlineMs) {
      q.waiters.shift();
      w.reject(timeoutError(origin, lim, w.intervalMs, w.deadlineMs, w.enqueuedAt));
      return pump(origin);
    }
    q.taking = true;
    store
      .take({ origin, cap: lim.maxInFlight, intervalMs: w.intervalMs, recoveryMs: config.recoveryMs, deadlineInMs: w.deadlineMs === null ? null : w.deadlineMs - Date.now() })
      .then(
        (r) => {
          q.taking = false;
          if (r.backoffInMs || r.level) noteBackoff(origin, r.backoffInMs ?? 0, r.level);
          else backoffs.delete(origin);
          if (r.granted) {
            q.waiters.shift();
            q.pollMs = POLL_MIN_MS;
            if (w.gone) release(origin);
            else void start(origin, w, r.startInMs ?? 0, lim);
            return pump(origin);
          }
          if (r.startInMs !== null) {
            q.waiters.shift();
            if (!w.gone) w.reject(timeoutError(origin, lim, w.intervalMs, w.deadlineMs, w.enqueuedAt));
            return pump(origin);
          }
          // Every slot is taken: ask again soon, or at once when one of ours ends (release → pump).
          w.held = true;
          q.timer = setTimeout(() => pump(origin), q.pollMs);
          q.pollMs = Math.min(POLL_MAX_MS, Math.ceil(q.pollMs * 1.5));
        },
        () => {
          q.taking = false;
          q.timer = setTimeout(() => pump(origin), POLL_MAX_MS);
        },
      );
  };

  return {
    retryAt,
    noteBackoff,
    enter(url, o = {}) {
      const origin = url.origin;
      const lim = limitsOf(origin);
      const intervalMs = Math.max(lim.minIntervalMs, Math.min(o.hints?.minIntervalMs ?? 0, config.maxCrawlDelayMs));
      // The fast path: nothing here can make this request wait.
      if (!lim.maxInFlight && !intervalMs && !backoffs.has(origin)) return Promise.resolve(fastTicket(origin));
      if (o.signal?.aborted) return Promise.reject(o.signal.reason);
      return new Promise<OriginTicket>((resolve, reject) => {
        let q = queues.get(origin);
        if (!q) queues.set(origin, (q = { waiters: [], taking: false, pollMs: POLL_MIN_MS }));
        const w: Waiter = { intervalMs, deadlineMs: o.deadlineMs ?? null, enqueuedAt: Date.now(), signal: o.signal, resolve, reject };
        const onAbort = () => {
          if (w.gone) return;
          w.gone = true;
          reject(o.signal!.reason);
        };
        o.signal?.addEventListener('abort', onAbort, { once: true });
        w.resolve = (t) => {
          o.signal?.removeEventListener('abort', onAbort);
          resolve(t);
        };
        w.reject = (e) => {
          o.signal?.removeEventListener('abort', onAbort);
          w.gone = true;
          reject(e);
        };
        q.waiters.push(w);
        pump(origin);
      });
    },
  };
}

function errorCode(e: unknown): string {
  for (let c: unknown = e, i = 0; c && i < 5; c = (c as { cause?: unknown }).cause, i++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string' && RESET_CODES.has(code)) return code;
    const d = (c as { details?: { cause?: unknown } }).details?.cause;
    if (typeof d === 'string' && RESET_CODES.has(d)) return d;
  }
  return '';
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

let configured: OriginGate | null = null;

/** Makes `gate` the process's: every fetchPage takes its slots from it (worker start-up). */
export function configureOriginGate(gate: OriginGate | null): void {
  configured = gate;
}

/** The process's gate, if one is configured (the browser engine's renders take their slots from it too). */
export function originGate(): OriginGate | null {
  return configured;
}
