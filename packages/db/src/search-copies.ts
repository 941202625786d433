import { sql, type SQL } from 'drizzle-orm';
import { searchIndexCte, searchIndexingEnabled, searchTargetOf, sharedIndexAllows } from './search-index';

/**
 * Cache hits store the same copy of a page again and again, mostly for the same team. Indexing it
 * each time would turn its markdown into index text here and make Postgres compute both text
 * vectors (an upsert computes generated columns before it meets the conflict) for a row that
 * already holds that copy or a fresher one. So the index CTE of a hit is
 * - guarded in SQL: it writes only when the team's row is missing or older than the copy;
 * - left out altogether when this process already wrote or checked that row for that copy.
 *   That stays true: a row is only ever replaced by a fresher copy, and is deleted only with its team.
 */
const known = new Map<string, number>();
const MAX_KNOWN = 50_000;

/**
 * The index CTE for a stored cache hit of `teamId` (indexed when `keep`; `options`: the request's,
 * which decide whether a shared index may show it, as for a fetch); `stored()` once its statement committed.
 */
export function hitSearchIndexCte(teamId: string, document: unknown, keep: boolean, options: unknown): { cte: SQL; stored(): void } {
  const none = { cte: sql``, stored: () => {} };
  if (!keep || !searchIndexingEnabled()) return none;
  const target = searchTargetOf(document);
  if (!target) return none;
  const key = `${teamId}|${target.urlKey}`;
  const storedAt = target.storedAt ? Date.parse(target.storedAt) : Date.now();
  if ((known.get(key) ?? -Infinity) >= storedAt) return none;
  const source = sql`SELECT ${teamId}::uuid AS team_id, ${sharedIndexAllows(sql`${JSON.stringify(options ?? null)}::jsonb`)} AS shareable WHERE NOT EXISTS (
      SELECT 1 FROM search_pages WHERE team_id = ${teamId}::uuid AND url_key = ${target.urlKey}::text AND stored_at >= coalesce(${target.storedAt}::timestamptz, now()))`;
  return {
    cte: searchIndexCte(source, document),
    stored() {
      if (known.size >= MAX_KNOWN) known.clear();
      known.set(key, Math.max(storedAt, known.get(key) ?? -Infinity));
    },
  };
}
