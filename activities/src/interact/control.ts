import type { ScrapeOptions } from '@wds/contracts';
import { endInteractSession, loadInteractSession, loadScrapeJob, releaseConcurrencySlot, releaseProfileLease, type Db } from '@wds/db';
import type { InteractControlActivities } from '@wds/workflows/interact';
import { asActivity } from '../failures';
import { sessionOwner } from './session';

/** wds-control: the bookkeeping of interact sessions (rows, slots, leases, billing); no browser here. */
export function createInteractControlActivities(deps: { db: Db }): InteractControlActivities {
  return {
    findParkedPage: ({ scrapeId }) =>
      asActivity(async () => {
        const row = await loadInteractSession(deps.db, scrapeId);
        if (row?.endReason === 'expired') return { expired: true as const };
        return row?.state === 'parked' ? { queue: row.queue } : null;
      }),

    // Idempotent: a retry finds the row ended, the slot and the lease already free.
    endInteractSession: ({ scrapeId, teamId, reason, slotId }) =>
      asActivity(async () => {
        const ended = await endInteractSession(deps.db, { scrapeId, reason });
        // A slot the session never recorded (its opening failed) is freed by id.
        if (slotId) await releaseConcurrencySlot(deps.db, slotId);
        const profile = ((await loadScrapeJob(deps.db, scrapeId))?.options as ScrapeOptions | undefined)?.profile;
        if (profile?.saveChanges) await releaseProfileLease(deps.db, { teamId, name: profile.name, owner: sessionOwner(scrapeId) });
        return { durationMs: ended.durationMs, credits: ended.credits };
      }),
  };
}
