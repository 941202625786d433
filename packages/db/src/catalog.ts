import { and, arrayOverlaps, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from './client';
import { catalogCallResults, catalogEntries, catalogRequests, type CatalogChargedBy } from './schema/index';
import { storable } from './text';

/**
 * The catalog (operator entries; packages/catalog parses `entry`) and the idempotency records
 * of catalog-mode requests (README: Catalog). Every request query takes the team id or the
 * request's own uuid; another team's x-request-id is another row.
 */

export interface CatalogEntryRow {
  provider: string;
  capability: string;
  entry: unknown;
  domains: string[];
}

/** The file is the operator's whole catalog: entries it no longer lists are removed, in one transaction. */
export async function replaceCatalogEntries(db: Db, rows: CatalogEntryRow[]): Promise<{ removed: number; stored: number }> {
  return db.transaction(async (tx) => {
    const removed = await tx.delete(catalogEntries).returning({ p: catalogEntries.provider });
    if (rows.length) await tx.insert(catalogEntries).values(rows.map((r) => ({ ...r, updatedAt: new Date() })));
    return { removed: removed.length, stored: rows.length };
  });
}

export async function removeCatalogEntries(db: Db, provider: string, capability?: string): Promise<number> {
  const where = capability ? and(eq(catalogEntries.provider, provider), eq(catalogEntries.capability, capability)) : eq(catalogEntries.provider, provider);
  return (await db.delete(catalogEntries).where(where).returning({ p: catalogEntries.provider })).length;
}

export async function listCatalogEntries(db: Db): Promise<CatalogEntryRow[]> {
  return db
    .select({ provider: catalogEntries.provider, capability: catalogEntries.capability, entry: catalogEntries.entry, domains: catalogEntries.domains })
    .from(catalogEntries)
    .orderBy(asc(catalogEntries.provider), asc(catalogEntries.capability));
}

export async function loadCatalogEntry(db: Db, provider: string, capability: string): Promise<CatalogEntryRow | null> {
  const [row] = await db
    .select({ provider: catalogEntries.provider, capability: catalogEntries.capability, entry: catalogEntries.entry, domains: catalogEntries.domains })
    .from(catalogEntries)
    .where(and(eq(catalogEntries.provider, provider), eq(catalogEntries.capability, capability)));
  return row ?? null;
}

/** Entries declaring any of `hosts` (a page's host and its parent domains): one GIN array overlap. */
export async function catalogEntriesForHosts(db: Db, hosts: string[]): Promise<CatalogEntryRow[]> {
  if (!hosts.length) return [];
  return db
    .select({ provider: catalogEntries.provider, capability: catalogEntries.capability, entry: catalogEntries.entry, domains: catalogEntries.domains })
    .from(catalogEntries)
    .where(arrayOverlaps(catalogEntries.domains, hosts))
    .orderBy(asc(catalogEntries.provider), asc(catalogEntries.capability));
}

export type CatalogRequestRow = typeof catalogRequests.$inferSelect;

export interface NewCatalogRequest {
  id: string;
  teamId: string;
  requestId: string;
  fingerprint: string;
  calls: unknown;
  timeoutMs: number;
}

/** The request's record, unless (team, request id) has one: then null, and the caller reads that one. */
export async function insertCatalogRequest(db: Db, r: NewCatalogRequest): Promise<boolean> {
  const rows = await db.insert(catalogRequests).values(r).onConflictDoNothing({ target: [catalogRequests.teamId, catalogRequests.requestId] }).returning({ id: catalogRequests.id });
  return rows.length > 0;
}

export async function loadCatalogRequest(db: Db, teamId: string, requestId: string): Promise<CatalogRequestRow | null> {
  const [row] = await db.select().from(catalogRequests).where(and(eq(catalogRequests.teamId, teamId), eq(catalogRequests.requestId, requestId)));
  return row ?? null;
}

export async function loadCatalogRequestById(db: Db, id: string): Promise<CatalogRequestRow | null> {
  const [row] = await db.select().from(catalogRequests).where(eq(catalogRequests.id, id));
  return row ?? null;
}

/** The workflow's first step: from here on the calls may run, so a lost workflow is "unresolved", never restarted. */
export async function beginCatalogRequest(db: Db, id: string): Promise<CatalogRequestRow | null> {
  const [row] = await db
    .update(catalogRequests)
    .set({ status: 'running', startedAt: sql`coalesce(${catalogRequests.startedAt}, now())` })
    .where(and(eq(catalogRequests.id, id), inArray(catalogRequests.status, ['pending', 'running'])))
    .returning();
  return row ?? null;
}

/** A request refused for credits: nothing ran, so the record goes and its x-request-id may be used again. */
export async function deleteCatalogRequest(db: Db, id: string): Promise<void> {
  await db.delete(catalogRequests).where(and(eq(catalogRequests.id, id), inArray(catalogRequests.status, ['pending', 'running'])));
}

export interface CatalogCallResultRow {
  idx: number;
  result: unknown;
  credits: number;
  chargedBy: CatalogChargedBy;
}

/** First write wins: a call re-run after a lost worker keeps the outcome already recorded. */
export async function storeCatalogCallResult(db: Db, requestId: string, r: CatalogCallResultRow): Promise<void> {
  await db.insert(catalogCallResults).values({ requestId, idx: r.idx, result: storable(r.result), credits: r.credits, chargedBy: r.chargedBy }).onConflictDoNothing();
}

export async function loadCatalogCallResults(db: Db, requestId: string): Promise<CatalogCallResultRow[]> {
  return db
    .select({ idx: catalogCallResults.idx, result: catalogCallResults.result, credits: catalogCallResults.credits, chargedBy: catalogCallResults.chargedBy })
    .from(catalogCallResults)
    .where(eq(catalogCallResults.requestId, requestId))
    .orderBy(asc(catalogCallResults.idx));
}

/** Stores the answer every replay gets (once: a retried finish changes nothing). */
export async function completeCatalogRequest(db: Db, id: string, response: unknown, creditsUsed: number): Promise<void> {
  await db
    .update(catalogRequests)
    .set({ status: 'completed', response: storable(response), creditsUsed, finishedAt: new Date() })
    .where(and(eq(catalogRequests.id, id), eq(catalogRequests.status, 'running')));
}

export async function markCatalogUnresolved(db: Db, id: string): Promise<void> {
  await db
    .update(catalogRequests)
    .set({ status: 'unresolved', finishedAt: new Date() })
    .where(and(eq(catalogRequests.id, id), inArray(catalogRequests.status, ['pending', 'running'])));
}
