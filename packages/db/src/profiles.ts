import { and, eq, sql } from 'drizzle-orm';
import type { Db } from './client';
import { browserProfiles } from './schema/index';
import { storable } from './text';

/**
 * Browser profiles (scrape `profile`). Reading never waits on a lease; saving takes the
 * (team, name) lease first, so two saving sessions never interleave their writes.
 */

/** The stored state of a profile, or null when it has none yet (never saved). */
export async function loadProfileState(db: Db, teamId: string, name: string): Promise<unknown | null> {
  const [row] = await db
    .select({ state: browserProfiles.storageState })
    .from(browserProfiles)
    .where(and(eq(browserProfiles.teamId, teamId), eq(browserProfiles.name, name)));
  return row?.state ?? null;
}

/**
 * Takes the saving lease for `owner` until now + ttlMs: free, expired, or already held by the
 * same owner (an activity retry) counts as available. Creates the profile row on first use.
 * Returns the state stored so far (null for a new profile), or `{ conflict: true }` when a
 * live lease belongs to someone else. Atomic: the upsert's row lock serialises contenders.
 */
export async function acquireProfileLease(
  db: Db,
  p: { teamId: string; name: string; owner: string; ttlMs: number },
): Promise<{ conflict: false; state: unknown | null } | { conflict: true }> {
  const expires = sql`now() + make_interval(secs => ${p.ttlMs / 1000})`;
  const rows = await db
    .insert(browserProfiles)
    .values({ teamId: p.teamId, name: p.name, leaseOwner: p.owner, leaseExpiresAt: expires })
    .onConflictDoUpdate({
      target: [browserProfiles.teamId, browserProfiles.name],
      set: { leaseOwner: p.owner, leaseExpiresAt: expires },
      setWhere: sql`${browserProfiles.leaseOwner} IS NULL OR ${browserProfiles.leaseExpiresAt} < now() OR ${browserProfiles.leaseOwner} = ${p.owner}`,
    })
    .returning({ state: browserProfiles.storageState });
  return rows.length ? { conflict: false, state: rows[0]!.state ?? null } : { conflict: true };
}

/**
 * Writes the state and frees the lease in one statement, only while `owner` still holds it.
 * False when the lease was lost (expired and taken by another session): nothing is written.
 */
export async function saveProfileState(db: Db, p: { teamId: string; name: string; owner: string; state: unknown }): Promise<boolean> {
  const rows = await db
    .update(browserProfiles)
    .set({ storageState: storable(p.state), updatedAt: new Date(), leaseOwner: null, leaseExpiresAt: null })
    .where(and(eq(browserProfiles.teamId, p.teamId), eq(browserProfiles.name, p.name), eq(browserProfiles.leaseOwner, p.owner)))
    .returning({ name: browserProfiles.name });
  return rows.length > 0;
}

/** Frees the lease without writing (a failed render). Idempotent; a lease held by another owner is left alone. */
export async function releaseProfileLease(db: Db, p: { teamId: string; name: string; owner: string }): Promise<void> {
  await db
    .update(browserProfiles)
    .set({ leaseOwner: null, leaseExpiresAt: null })
    .where(and(eq(browserProfiles.teamId, p.teamId), eq(browserProfiles.name, p.name), eq(browserProfiles.leaseOwner, p.owner)));
}
