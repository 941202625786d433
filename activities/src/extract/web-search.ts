import type { StoredExtractOptions } from '@wds/contracts';
import { crawlUrlKey } from '@wds/crawl';
import { enqueueUrls, noteExtractWarning, type Db } from '@wds/db';
import { usableUrl } from '@wds/search';
import type { WebSearch } from '../search/web-search';

/**
 * extract's `enableWebSearch`: the deployment's search (the own index, SearXNG, or both, as
 * POST /v2/search answers) is asked for the request's query (`webSearchQuery`, decided by the
 * API and stored with the job), and the result pages join the job's frontier after the named
 * ones, at depth 1 like wildcard-found pages (the merge ranks named pages first). A search that
 * fails or finds nothing is a warning on the job, never its failure: the named pages are read
 * anyway. Idempotent (a retried seed step enqueues nothing twice, and the warning is set, not added).
 */
export async function searchIntoFrontier(deps: { db: Db; search?: WebSearch }, job: { id: string; teamId: string; options: StoredExtractOptions }): Promise<number> {
  const ws = job.options.webSearch;
  if (!ws) return 0;
  if (!deps.search) {
    await noteExtractWarning(deps.db, job.id, 'Web search was asked for, but the worker that expanded the URLs has no search configured; only the named pages were read.');
    return 0;
  }
  let urls: string[];
  try {
    urls = await searchRelaxed(deps.search, ws.query, job.teamId, ws.limit);
  } catch (e) {
    await noteExtractWarning(deps.db, job.id, `Web search for "${ws.query}" failed (${(e as Error).message}); only the named pages were read.`);
    return 0;
  }
  if (!urls.length) {
    await noteExtractWarning(deps.db, job.id, `Web search for "${ws.query}" found no pages.`);
    return 0;
  }
  return enqueueUrls(
    deps.db,
    job.id,
    urls.map((url) => ({ url, key: crawlUrlKey(url), depth: 1, external: false })),
  );
}

/**
 * The query as written first; when that finds nothing and it has several words, any of them
 * (`a or b or c`: the own index requires every word of a plain query, so a question-like
 * prompt whose words no single page holds would find nothing). Result URLs once, usable only.
 */
async function searchRelaxed(search: WebSearch, query: string, teamId: string, limit: number): Promise<string[]> {
  const words = query.split(/\s+/).filter(Boolean);
  for (const q of words.length > 1 ? [query, words.join(' or ')] : [query]) {
    const hits = await search.search(q, { teamId, limit });
    const urls = [...new Set(hits.map((h) => h.url).filter(usableUrl))].slice(0, limit);
    if (urls.length) return urls;
  }
  return [];
}
