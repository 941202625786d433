import type { ScrapeOptions } from '@wds/contracts';
import { finishPage } from '@wds/db';
import type { PageHandler } from '../frontier/batch-runner';
import { withInlineRetries } from '../frontier/page-retries';
import { scrapeOnePage, type PageDeps } from '../scrape/pipeline';

/** What an extract keeps of a page: the markdown the model reads, and where it came from. */
export interface ExtractSourceDocument {
  markdown: string;
  metadata: { sourceURL: string; url: string; statusCode: number; title?: string };
}

/**
 * The frontier page handler of extract jobs: fetch (the page cache allowed, as for crawls),
 * build markdown, and store it as the page's document in one idempotent statement (finishPage).
 * Extract bills by model tokens, not per page (Firecrawl: 15 tokens a credit), so the page is
 * stored with 0 credits; links are not followed (wildcards were expanded by map up front).
 */
export function extractPageHandler(deps: PageDeps, options: ScrapeOptions): PageHandler {
  return (u, run) =>
    withInlineRetries(deps.db, run.jobId, u, run, async () => {
      const page = await scrapeOnePage(deps, { url: u.url, options, scrapeId: u.pageId, signal: run.signal, useCache: true, sleep: run.sleep, onBackoff: 'retry' });
      const m = page.document.metadata;
      const body: ExtractSourceDocument = {
        markdown: page.document.markdown ?? '',
        metadata: { sourceURL: u.url, url: String(m.url ?? u.url), statusCode: page.statusCode, ...(typeof m.title === 'string' ? { title: m.title } : {}) },
      };
      const stored = await finishPage(deps.db, run.jobId, u.key, { links: [], document: { body, credits: 0 } });
      return stored ? 'stored' : 'skipped';
    });
}
