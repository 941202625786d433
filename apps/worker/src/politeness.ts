import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { backOffOrigin, beginOriginStart, dropHolder, listenOnChannel, ORIGIN_BACKOFF_CHANNEL, originsInBackoff, recoverOrigin, releaseOriginSlot, renewHolder, takeOriginSlot, type Db } from '@wds/db';
import { ConfigError, exitOnConfigError } from '@wds/config';
import { configureOriginGate, createOriginGate, parseOriginLimits, type OriginGate, type OriginLimitRule } from '@wds/fetch';
import type { Logger } from '@wds/log';
import { politenessMetrics } from '@wds/metrics';
import type { WorkerEnv } from './env';

/** Connection resets from one origin within RESET_WINDOW_MS that count as one 503. */
const RESET_BURST = 5;
const RESET_WINDOW_MS = 10_000;

export interface Politeness {
  gate: OriginGate;
  stop(): Promise<void>;
}

/**
 * This process's side of the deployment's politeness budget (@wds/fetch politeness/gate.ts over
 * @wds/db origin-budget.ts): a holder kept alive in Postgres, the backoff announcements of every
 * worker, and the gate every fetchPage (and the gated renderer) takes its slots from.
 */
export async function startPoliteness(env: WorkerEnv, db: Db, log: Logger): Promise<Politeness | null> {
  if (!env.WDS_POLITENESS) return null;
  let overrides: OriginLimitRule[] = [];
  try {
    overrides = parseOriginLimits(env.WDS_ORIGIN_LIMITS);
  } catch (e) {
    exitOnConfigError(new ConfigError('WDS_ORIGIN_LIMITS', (e as Error).message));
  }
  const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const leaseMs = env.WDS_ORIGIN_SLOT_LEASE_MS;
  await renewHolder(db, holder, leaseMs);
  const renew = setInterval(() => void renewHolder(db, holder, leaseMs).catch((err) => log.warn({ err }, 'politeness: holder renewal failed')), Math.floor(leaseMs / 3));
  renew.unref();
  const gate = createOriginGate(
    {
      take: (t) => takeOriginSlot(db, { ...t, holder }),
      release: (origin) => releaseOriginSlot(db, origin, holder),
      backoff: (b) => backOffOrigin(db, b),
      recover: (origin, stepMs) => recoverOrigin(db, origin, stepMs),
      begin: (b) => beginOriginStart(db, b),
    },
    {
      defaults: { maxInFlight: env.WDS_ORIGIN_MAX_IN_FLIGHT, minIntervalMs: env.WDS_ORIGIN_MIN_INTERVAL_MS },
      overrides,
      backoffBaseMs: env.WDS_ORIGIN_BACKOFF_BASE_MS,
      backoffMaxMs: env.WDS_ORIGIN_BACKOFF_MAX_MS,
      recoveryMs: env.WDS_ORIGIN_RECOVERY_MS,
      maxCrawlDelayMs: env.WDS_ORIGIN_MAX_CRAWL_DELAY_MS,
      resetBurst: RESET_BURST,
      resetWindowMs: RESET_WINDOW_MS,
      // The origins the operator names are labelled in the metrics from the start.
      observer: politenessMetrics(overrides.flatMap((r) => (r.match.includes('://') ? [new URL(r.match).origin] : []))),
    },
  );
  // Another worker's backoff step reaches this one's fast path; after a reconnection, what was missed is read.
  const listener = listenOnChannel(
    env.DATABASE_URL,
    ORIGIN_BACKOFF_CHANNEL,
    (payload) => {
      try {
        const m = JSON.parse(payload) as { origin: string; inMs: number; level: number };
        gate.noteBackoff(m.origin, m.inMs, m.level);
      } catch {
        // not ours
      }
    },
    () => void originsInBackoff(db).then((all) => all.forEach((b) => gate.noteBackoff(b.origin, b.backoffInMs, b.level)), () => {}),
  );
  configureOriginGate(gate);
  return {
    gate,
    async stop() {
      configureOriginGate(null);
      clearInterval(renew);
      await listener.close();
      await dropHolder(db, holder).catch(() => {});
    },
  };
}
