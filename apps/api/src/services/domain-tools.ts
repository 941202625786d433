import { entriesForUrls, matchedContract, type ToolContract, type ToolDetail } from '@wds/catalog';
import type { ScrapeDocument } from '@wds/contracts';
import type { Db } from '@wds/db';

/**
 * `domainTools` of a scrape (spec: data.tools): the catalog's capabilities whose declared domains
 * cover the page — its requested URL or, after redirects, its final one — as tool contracts at
 * `toolDetail` (default `summary`), each with `matchedBy: ["domain"]` and the URLs it matched.
 * An empty list when none does. Free (spec).
 */
export async function domainToolsOf(db: Db, d: ScrapeDocument, detail: ToolDetail): Promise<ToolContract[]> {
  const urls = [...new Set([d.metadata.sourceURL, d.metadata.url].filter((u): u is string => typeof u === 'string'))];
  return (await entriesForUrls(db, urls)).map(({ entry, urls: matched }) => matchedContract(entry, detail, 'domain', matched));
}
