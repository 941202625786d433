import { catalogEntriesForHosts, listCatalogEntries, loadCatalogEntry, replaceCatalogEntries, type CatalogEntryRow, type Db } from '@wds/db';
import { BUILTIN_ENTRIES, builtinEntry } from './builtins';
import { hostCandidates } from './domains';
import type { CatalogEntry } from './types';

/**
 * The deployment's catalog: the built-ins (code) and the operator's entries (Postgres, written
 * by `npm run catalog -- import`). Read per request: the table is small and an import applies
 * to the next request of every API process and worker.
 */

const entryOf = (row: CatalogEntryRow): CatalogEntry => row.entry as CatalogEntry;

export const rowOf = (e: CatalogEntry): CatalogEntryRow => ({ provider: e.provider, capability: e.capability, entry: e, domains: e.domains });

export async function resolveEntry(db: Db, provider: string, capability: string): Promise<CatalogEntry | null> {
  const builtin = builtinEntry(provider, capability);
  if (builtin) return builtin;
  const row = await loadCatalogEntry(db, provider, capability);
  return row ? entryOf(row) : null;
}

export async function allEntries(db: Db): Promise<CatalogEntry[]> {
  return [...BUILTIN_ENTRIES, ...(await listCatalogEntries(db)).map(entryOf)];
}

/** Operator entries whose declared domains cover any of `urls` (built-ins declare none), each with the URLs it matched. */
export async function entriesForUrls(db: Db, urls: string[]): Promise<{ entry: CatalogEntry; urls: string[] }[]> {
  const hostsByUrl = urls.map((u) => ({ url: u, hosts: hostCandidates(u) }));
  const rows = await catalogEntriesForHosts(db, [...new Set(hostsByUrl.flatMap((h) => h.hosts))]);
  return rows.map((r) => ({ entry: entryOf(r), urls: hostsByUrl.filter((h) => h.hosts.some((x) => r.domains.includes(x))).map((h) => h.url) }));
}

export async function importEntries(db: Db, entries: CatalogEntry[]): Promise<{ removed: number; stored: number }> {
  return replaceCatalogEntries(db, entries.map(rowOf));
}
