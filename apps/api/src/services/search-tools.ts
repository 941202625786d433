import { allEntries, entriesForUrls, matchedContract, mergeMatches, rankByQuery, urlsInText, type ToolContract } from '@wds/catalog';
import type { SearchRequest } from '@wds/contracts';
import type { Db } from '@wds/db';

/**
 * `data.tools` of a search (Firecrawl's Alexandria discovery, free): with the `alexandria`
 * source, the catalog's tools ranked against the query (matchedBy `semantic`; packages/catalog
 * rank.ts says how); with `domainTools` (on by default with that source), the tools whose
 * declared domains cover a web result or a URL written in the query (matchedBy `domain`). Up to
 * `limit` per kind of match; a tool found both ways is listed once. Detail: `toolDetail`, default compact.
 */
export async function searchTools(db: Db, o: SearchRequest, data: { web?: { url?: unknown }[] }): Promise<ToolContract[]> {
  const detail = o.toolDetail ?? 'compact';
  const out: ToolContract[] = [];
  if (o.alexandria) {
    out.push(...rankByQuery(await allEntries(db), o.query).slice(0, o.limit).map((e) => matchedContract(e, detail, 'semantic', [])));
  }
  if (o.domainTools) {
    const urls = [...new Set([...(data.web ?? []).map((r) => r.url).filter((u): u is string => typeof u === 'string'), ...urlsInText(o.query)])];
    const matched = await entriesForUrls(db, urls);
    out.push(...matched.slice(0, o.limit).map(({ entry, urls: hit }) => matchedContract(entry, detail, 'domain', hit)));
  }
  return mergeMatches(out);
}
