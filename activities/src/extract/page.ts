import type { ScrapeOptions } from '@wds/contracts';
import { failPage, finishPage } from '@wds/db';
import { toWdsError } from '@wds/errors';
import type { PageHandler } from '../frontier/batch-runner';
import { scrapeOnePage, type PageDeps } from '../scrape/pipeline';

/** Retries of a page inside its batch for transient failures, before it is recorded as failed. */
const INLINE_RETRIES = 2;

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
  return async (u, run) => {
    for (let attempt = 0; ; attempt++) {
      try {
        const page = await scrapeOnePage(deps, { url: u.url, options, scrapeId: u.pageId, signal: run.signal, useCache: true, sleep: run.sleep });
        const m = page.document.metadata;
        const body: ExtractSourceDocument = {
          markdown: page.document.markdown ?? '',
          metadata: { sourceURL: u.url, url: String(m.url ?? u.url), statusCode: page.statusCode, ...(typeof m.title === 'string' ? { title: m.title } : {}) },
        };
        const stored = await finishPage(deps.db, run.jobId, u.key, { links: [], document: { body, credits: 0 } });
        return stored ? 'stored' : 'skipped';
      } catch (e) {
        if (run.signal.aborted) return 'skipped';
        const err = toWdsError(e);
        if (err.retryable && attempt < INLINE_RETRIES) {
          await run.sleep(300 * (attempt + 1));
          continue;
        }
        await failPage(deps.db, run.jobId, u.key, 'failed', err.message);
        return 'failed';
      }
    }
  };
}
