import { createHash, randomBytes } from 'node:crypto';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from './client';
import { apiKeys, teams, TEAM_FLAGS, type TeamFlag, type TeamFlags } from './schema/index';

export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** Keys look like Firecrawl's (`fc-` + 32 hex) so tools that sniff the prefix accept them. */
export const newKey = () => `fc-${randomBytes(16).toString('hex')}`;

export interface AuthedKey {
  keyId: string;
  teamId: string;
  scopes: string[] | null;
  flags: TeamFlags;
}

export async function findActiveKey(db: Db, key: string): Promise<AuthedKey | null> {
  const rows = await db
    .select({ keyId: apiKeys.id, teamId: apiKeys.teamId, scopes: apiKeys.scopes, flags: teams.flags })
    .from(apiKeys)
    .innerJoin(teams, eq(teams.id, apiKeys.teamId))
    .where(and(eq(apiKeys.keyHash, hashKey(key)), isNull(apiKeys.revokedAt)))
    .limit(1);
  return rows[0] ?? null;
}

export async function ensureTeam(db: Db, name: string, flags?: TeamFlags): Promise<string> {
  const inserted = await db.insert(teams).values({ name, flags: flags ?? {} }).onConflictDoNothing().returning({ id: teams.id });
  if (inserted[0]) return inserted[0].id;
  const [row] = await db.select({ id: teams.id }).from(teams).where(eq(teams.name, name));
  if (flags) await db.update(teams).set({ flags }).where(eq(teams.id, row!.id));
  return row!.id;
}

/**
 * Operator entry point (`npm run keys -- flags`): turns team-level features on or off by team
 * name, leaving the other flags as they are, in one statement. Returns the team's flags after the
 * change, or null when no team has that name. An API key's flags are read on every request, so a
 * change applies to the next request.
 */
export async function setTeamFlags(db: Db, name: string, change: Partial<Record<TeamFlag, boolean>>): Promise<TeamFlags | null> {
  const unknown = Object.keys(change).filter((k) => !(TEAM_FLAGS as readonly string[]).includes(k));
  if (unknown.length) throw new Error(`unknown team flag(s): ${unknown.join(', ')}; known: ${TEAM_FLAGS.join(', ')}`);
  const rows = await db
    .update(teams)
    .set({ flags: sql`${teams.flags} || ${JSON.stringify(change)}::jsonb` })
    .where(eq(teams.name, name))
    .returning({ flags: teams.flags });
  return rows[0]?.flags ?? null;
}

/** Stores the given key (or a new one) for the team; idempotent for a given key. */
export async function createKey(
  db: Db,
  teamId: string,
  opts: { key?: string; name?: string; scopes?: string[] | null } = {},
): Promise<{ id: string; key: string }> {
  const key = opts.key ?? newKey();
  const inserted = await db
    .insert(apiKeys)
    .values({ teamId, keyHash: hashKey(key), keyPrefix: key.slice(0, 7), name: opts.name, scopes: opts.scopes ?? null })
    .onConflictDoUpdate({ target: apiKeys.keyHash, set: { teamId, revokedAt: null } })
    .returning({ id: apiKeys.id });
  return { id: inserted[0]!.id, key };
}

/** Revokes by the key itself or by key id; returns how many keys were revoked. */
export async function revokeKey(db: Db, keyOrId: string): Promise<number> {
  const byId = /^[0-9a-f-]{36}$/i.test(keyOrId);
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(byId ? eq(apiKeys.id, keyOrId) : eq(apiKeys.keyHash, hashKey(keyOrId)), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return rows.length;
}

export async function listKeys(db: Db) {
  return db
    .select({ id: apiKeys.id, team: teams.name, prefix: apiKeys.keyPrefix, name: apiKeys.name, scopes: apiKeys.scopes, createdAt: apiKeys.createdAt, revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .innerJoin(teams, eq(teams.id, apiKeys.teamId))
    .orderBy(apiKeys.createdAt);
}
