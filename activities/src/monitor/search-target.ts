import { crawlUrlKey } from '@wds/crawl';
import type { MonitorSearchTarget } from '@wds/contracts';
import {
  checkPageIdOf, collectTarget, historyKey, insertCheckPages, monitorsById, pageHistoriesOf, runTarget,
  type NewCheckPage, type RunTarget, type VersionWrite,
} from '@wds/db';
import { toWdsError } from '@wds/errors';
import { searchCredits, usableUrl, type TimeFilter } from '@wds/search';
import type { TargetRef } from '@wds/workflows/monitor';
import type { SearchHit, WebSearch } from '../search/web-search';
import type { MonitorPageDeps, SearchPending } from './batch';
import { searchVersion } from './model';
import { idOf } from './results';
import { targetSetup } from './setup';

export interface SearchTargetDeps extends MonitorPageDeps {
  /** The deployment's search (the own index, SearXNG or both: what POST /v2/search answers). */
  search: WebSearch;
}

const DEFAULT_MAX_RESULTS = 10;
const WINDOW_MS: Record<NonNullable<MonitorSearchTarget['searchWindow']>, { ms: number; range: TimeFilter['range'] }> = {
  '5m': { ms: 5 * 60_000, range: 'h' },
  '15m': { ms: 15 * 60_000, range: 'h' },
  '1h': { ms: 3_600_000, range: 'h' },
  '6h': { ms: 6 * 3_600_000, range: 'd' },
  '24h': { ms: 24 * 3_600_000, range: 'd' },
  '7d': { ms: 7 * 24 * 3_600_000, range: 'w' },
};

const NO_LLM = 'no LLM is configured (OPENAI_API_KEY, or OPENAI_BASE_URL / OLLAMA_BASE_URL with MODEL_NAME): results are not judged, and every result not seen before alerts';

/**
 * A search target of a check (wds-fetch), as Firecrawl's web-scale monitors work: run each query
 * through the deployment's search within the recency window (`searchWindow`, default 24h), merge
 * and dedupe the results by URL up to `maxResults` (a cap across all queries), and track them in
 * the target's own history: a result seen on an earlier check is `same` (`already_seen`). A new
 * one — with the judge on (a goal, judgeEnabled, an LLM) — is fetched and judged against the goal
 * by the run's model step (`alert` → `new`; `watching`, `ignored` → `same`); without the judge it
 * alerts at once (`new`). A result judged under another goal is judged again when it comes back.
 * Credits: the search call (2 per 10 results, counted before merging), plus 1 per judged result.
 */
export async function runSearchTarget(deps: SearchTargetDeps, ref: TargetRef): Promise<{ results: number; toJudge: number }> {
  const t = await runTarget(deps.db, ref.checkId, ref.targetId);
  if (!t || t.status !== 'pending') return { results: 0, toJudge: 0 };
  const m = (await monitorsById(deps.db, [t.monitorId])).get(t.monitorId);
  const target = m?.targets.find((x) => x.id === t.targetId) as (MonitorSearchTarget & { id: string }) | undefined;
  const s = targetSetup(m, t.monitorId, t.targetId);
  const judging = !!s.goal && deps.llmAvailable;
  const degraded = !!s.goal && !deps.llmAvailable ? { judgeDegraded: true, degradedReason: NO_LLM } : { judgeDegraded: false, degradedReason: null };
  if (!target) return fail(deps, ref, t, `search: ${t.targetId}`, 'The search target could not be run (its settings changed since this check was due).', degraded);
  let found: { hits: (SearchHit & { query: string })[]; raw: number };
  try {
    found = await searchAll(deps.search, target, t.teamId);
  } catch (e) {
    return fail(deps, ref, t, `search: ${target.queries[0]}`, `The search failed: ${toWdsError(e).message}`, degraded);
  }
  const keyed = found.hits.map((h) => ({ ...h, urlKey: crawlUrlKey(h.url), pageId: '' })).map((h) => ({ ...h, pageId: checkPageIdOf(t.checkId, t.targetId, h.urlKey) }));
  const histories = await pageHistoriesOf(deps.db, keyed.map((h) => ({ teamId: t.teamId, tag: s.tag, urlKey: h.urlKey, sourceKey: h.pageId })));
  const rows: NewCheckPage[] = [];
  const writes: VersionWrite[] = [];
  for (const h of keyed) {
    const seen = histories.get(historyKey(t.teamId, s.tag, h.urlKey))?.baseline ?? null;
    const info = { ...(h.title ? { title: h.title } : {}), ...(h.description ? { description: h.description } : {}), query: h.query };
    const base = { checkId: t.checkId, targetId: t.targetId, url: h.url, urlKey: h.urlKey, kind: 'search' as const };
    if (judging && (!seen || seen.jsonKey !== s.goalKey)) {
      const search: SearchPending = { ...info, ...(seen ? { seenVersionId: seen.id } : {}) };
      rows.push({ ...base, status: 'queued', pending: { search } });
      continue;
    }
    const metadata = { ...info, searchStatus: seen ? 'already_seen' : 'alert' };
    rows.push({ ...base, status: seen ? 'same' : 'new', result: { statusCode: null, error: null, previousScrapeId: idOf(seen?.sourceKey), currentScrapeId: h.pageId, metadata, diff: null, snapshot: null, credits: 0 } });
    writes.push(seen ? { kind: 'seen', teamId: t.teamId, versionId: seen.id, sourceKey: h.pageId, checkStatus: 'ok', statusCode: null, bodyHash: null, etag: null, lastModified: null } : searchVersion({ ...h, teamId: t.teamId }, s, null));
  }
  await insertCheckPages(deps.db, ref.runId, rows, writes);
  const credits = searchCredits(found.raw);
  await collectTarget(deps.db, { checkId: t.checkId, targetId: t.targetId, credits, result: { targetId: t.targetId, type: 'search', searchCompleted: true, resultCount: keyed.length, searchCredits: credits, ...degraded } });
  return { results: keyed.length, toJudge: rows.filter((r) => r.status === 'queued').length };
}

/** Every query within the window; results merged in query order, deduped by URL key, at most `maxResults`. `raw`: results before merging (what the search call bills). */
async function searchAll(search: WebSearch, target: MonitorSearchTarget, teamId: string): Promise<{ hits: (SearchHit & { query: string })[]; raw: number }> {
  const max = target.maxResults ?? DEFAULT_MAX_RESULTS;
  const w = WINDOW_MS[target.searchWindow ?? '24h'];
  const tbs: TimeFilter = { since: new Date(Date.now() - w.ms), until: null, sortByDate: false, range: w.range };
  const seen = new Set<string>();
  const hits: (SearchHit & { query: string })[] = [];
  let raw = 0;
  for (const query of target.queries) {
    const got = await search.search(query, { teamId, limit: max, tbs, ...(target.includeDomains ? { includeDomains: target.includeDomains } : {}), ...(target.excludeDomains ? { excludeDomains: target.excludeDomains } : {}) });
    raw += got.length;
    for (const h of got) {
      if (hits.length >= max || !usableUrl(h.url)) continue;
      const k = crawlUrlKey(h.url);
      if (seen.has(k)) continue;
      seen.add(k);
      hits.push({ ...h, query });
    }
  }
  return { hits, raw };
}

/** The target could not run: one error page names it, and the target is collected with the reason. */
async function fail(deps: SearchTargetDeps, ref: TargetRef, t: RunTarget, name: string, error: string, degraded: object): Promise<{ results: number; toJudge: number }> {
  const page: NewCheckPage = {
    checkId: t.checkId, targetId: t.targetId, url: name, urlKey: `target:${t.targetId}`, kind: 'page', status: 'error',
    result: { statusCode: null, error, previousScrapeId: null, currentScrapeId: null, metadata: { searchStatus: 'skipped' }, diff: null, snapshot: null, credits: 0 },
  };
  await insertCheckPages(deps.db, ref.runId, [page]);
  await collectTarget(deps.db, { checkId: t.checkId, targetId: t.targetId, result: { targetId: t.targetId, type: 'search', searchCompleted: false, resultCount: 0, error, ...degraded } });
  return { results: 0, toJudge: 0 };
}
