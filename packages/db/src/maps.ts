import { and, eq, like, or } from 'drizzle-orm';
import type { Db } from './client';
import { mapJobs, pageCache } from './schema/index';
import { storable } from './text';

export async function insertMapJob(db: Db, row: { id: string; teamId: string; options: unknown }) {
  await db.insert(mapJobs).values(row);
}

export async function loadMapJob(db: Db, id: string) {
  const [row] = await db.select().from(mapJobs).where(eq(mapJobs.id, id));
  return row ?? null;
}

export async function completeMapJob(db: Db, id: string, links: unknown) {
  await db.update(mapJobs).set({ status: 'completed', links: storable(links), completedAt: new Date() }).where(eq(mapJobs.id, id));
}

export async function failMapJob(db: Db, id: string, error: unknown) {
  await db.update(mapJobs).set({ status: 'failed', error: storable(error), completedAt: new Date() }).where(and(eq(mapJobs.id, id), eq(mapJobs.status, 'pending')));
}

/** URLs of a site already in the page cache (the service's own index of pages it has seen). */
export async function cachedUrlsOfHost(db: Db, origins: string[], limit: number): Promise<string[]> {
  if (!origins.length) return [];
  const rows = await db
    .select({ url: pageCache.url })
    .from(pageCache)
    .where(or(...origins.map((o) => like(pageCache.url, `${o.replace(/[%_\\]/g, (c) => `\\${c}`)}/%`))))
    .limit(limit);
  return rows.map((r) => r.url);
}
