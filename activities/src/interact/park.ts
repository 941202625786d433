import type { ScrapeOptions } from '@wds/contracts';
import type { LivePage, SessionStore } from '@wds/browser';
import { parkInteractPage, type Db } from '@wds/db';

/** What a browser worker remembers of a page it holds for interact. */
export interface SessionMeta {
  teamId: string;
  profile?: ScrapeOptions['profile'];
}

export type InteractSessions = SessionStore<SessionMeta>;

/** Keeps scrapes' rendered pages for a first interaction (render-page.ts). */
export interface PageKeeper {
  park(p: { scrapeId: string; teamId: string; page: LivePage; profile?: ScrapeOptions['profile'] }): Promise<void>;
}

/**
 * Whether a scrape's page may outlive its render for interact: never for zero data retention or
 * lockdown (nothing of them may stay behind, and they cannot be interacted with).
 */
export function mayKeepPage(o: Pick<ScrapeOptions, 'zeroDataRetention' | 'lockdown'>): boolean {
  return !o.zeroDataRetention && !o.lockdown;
}

/**
 * The page goes into this worker's store and its row says which queue holds it. Never fails the
 * scrape: a page that cannot be recorded is closed (a first interaction then replays the scrape).
 */
export function createPageKeeper(deps: { db: Db; sessions: InteractSessions; queue: string }): PageKeeper {
  return {
    async park({ scrapeId, teamId, page, profile }) {
      if (!deps.sessions.park(scrapeId, page, { teamId, profile })) return;
      try {
        await parkInteractPage(deps.db, { scrapeId, teamId, queue: deps.queue });
      } catch {
        await deps.sessions.end(scrapeId, 'evicted');
      }
    },
  };
}
