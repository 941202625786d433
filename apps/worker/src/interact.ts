import { randomUUID } from 'node:crypto';
import { createPageKeeper, type InteractBrowserDeps, type InteractSessions, type PageKeeper } from '@wds/activities';
import { endInteractSession, type Db } from '@wds/db';
import type { Logger } from '@wds/log';
import { browserSessionQueue } from '@wds/workflows/interact';
import type { WorkerEnv } from './env';

/** How long beyond the idle timeout a live session's page is kept when its workflow's close never comes. */
const LIVE_GRACE_MS = 60_000;

export interface InteractResources {
  /** This process's own task queue: interact calls about the pages it holds. */
  queue: string;
  sessions: InteractSessions;
  keeper: PageKeeper;
  engine: InteractBrowserDeps['engine'];
  stop(): Promise<void>;
}

/**
 * The interact side of a browser worker: the pages it keeps (scrapes' pages parked for a first
 * interaction, live sessions) and the queue only it serves, `wds-browser-<workerId>` — a new id
 * per process, so a restarted worker never receives calls about pages it does not have. A page
 * the store ends by itself (evicted, idle, its renderer gone, shutdown) is written to its row.
 */
export async function createInteractResources(env: WorkerEnv, db: Db, log: Logger): Promise<InteractResources> {
  const { SessionStore, runInteraction, snapshotPage } = await import('@wds/browser');
  const queue = browserSessionQueue(`${process.pid}-${randomUUID().slice(0, 8)}`);
  const sessions: InteractSessions = new SessionStore({
    maxParked: env.WDS_INTERACT_PARKED_PAGES,
    maxLive: env.WDS_INTERACT_SESSIONS,
    maxLivePerTeam: env.WDS_INTERACT_SESSIONS_PER_TEAM,
    teamOf: (m) => m.teamId,
    idleMs: env.WDS_INTERACT_IDLE_SECONDS * 1000,
    liveGraceMs: LIVE_GRACE_MS,
    onEnd: async (s, reason) => {
      // Sessions the workflow stops are ended (and billed) by the workflow itself.
      if (reason === 'stopped') return;
      await endInteractSession(db, { scrapeId: s.key, reason, queue, state: s.state }).catch((e) => log.warn({ err: e, scrapeId: s.key }, 'interact session end not recorded'));
    },
  });
  return {
    queue,
    sessions,
    keeper: createPageKeeper({ db, sessions, queue }),
    engine: { run: runInteraction, snapshot: snapshotPage },
    stop: () => sessions.close(),
  };
}
