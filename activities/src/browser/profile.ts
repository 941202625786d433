import type { ScrapeOptions } from '@wds/contracts';
import { acquireProfileLease, loadProfileState, releaseProfileLease, saveProfileState, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';

/** Extra lease time beyond the render's budget, so a slow write-back does not lose it. */
const LEASE_MARGIN_MS = 30_000;

/**
 * One render's view of a browser profile (spec: `profile`). Readers (`saveChanges: false`) load
 * the stored state and never wait. A saving session first takes the (team, name) lease — held
 * by the scrape job id, so an activity retry gets it back — for its budget plus a margin;
 * a second live saver gets 409 Conflict. The lease ends with the write-back, or is freed when
 * the render fails; a worker that dies leaves it to expire.
 */
export interface ProfileSession {
  /** Playwright storageState to load, or undefined for a profile never saved. */
  state: unknown;
  saving: boolean;
  /** Writes the state and frees the lease (saving sessions); 409 if the lease was lost meanwhile. */
  save(state: unknown): Promise<void>;
  /** Frees the lease without writing (no-op for readers). */
  release(): Promise<void>;
}

export async function openProfile(
  db: Db,
  p: { teamId: string; profile: NonNullable<ScrapeOptions['profile']>; owner: string; budgetMs: number },
): Promise<ProfileSession> {
  const { name, saveChanges } = p.profile;
  const key = { teamId: p.teamId, name, owner: p.owner };
  if (!saveChanges) {
    const state = await loadProfileState(db, p.teamId, name);
    return { state: state ?? undefined, saving: false, save: async () => {}, release: async () => {} };
  }
  const lease = await acquireProfileLease(db, { ...key, ttlMs: p.budgetMs + LEASE_MARGIN_MS });
  if (lease.conflict) {
    throw new WdsError('CONFLICT', {
      code: 'PROFILE_IN_USE',
      message: `Conflict: profile "${name}" already has a saving session in progress; only one saving session per profile is allowed at a time. Retry when it ends, or send saveChanges: false to use the profile without saving.`,
    });
  }
  return {
    state: lease.state ?? undefined,
    saving: true,
    async save(state) {
      if (!(await saveProfileState(db, { ...key, state }))) {
        throw new WdsError('CONFLICT', {
          code: 'PROFILE_IN_USE',
          message: `Conflict: the saving session of profile "${name}" outlived its lease and another session took it; the browser state of this scrape was not saved.`,
        });
      }
    },
    release: () => releaseProfileLease(db, key),
  };
}
