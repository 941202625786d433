import { Context } from '@temporalio/activity';
import { extractDocsToDo, finishJob, type Db } from '@wds/db';
import type { LlmClient } from '@wds/llm';
import type { JobRef } from '@wds/workflows/common';
import type { CrawlParamsActivities } from '@wds/workflows/crawl-params';
import type { EndExtractInput, EndScrapePhaseInput, ExtractControlActivities, ExtractFetchActivities, ExtractLlmActivities } from '@wds/workflows/extract';
import type { ProcessBatchInput } from '@wds/workflows/crawl';
import { asActivity } from '../failures';
import { runFrontierBatch } from '../frontier/batch-runner';
import type { PageDeps } from '../scrape/pipeline';
import { deriveCrawlParams } from './crawl-params';
import { expandWildcards } from './expand';
import { extractPage } from './extract-page';
import { endExtract, mergeExtract } from './finish';
import { loadExtractInfo } from './job';
import { searchIntoFrontier } from './web-search';
import type { WebSearch } from '../search/web-search';
import { extractPageHandler } from './page';

/** wds-fetch: the extract's outbound requests (wildcard expansion through map, web search, page fetches). */
export function createExtractFetchActivities(deps: PageDeps & { search?: WebSearch }): ExtractFetchActivities {
  return {
    // The seed step: what wildcards expand to, then what the web search finds, join the named URLs.
    expandExtractUrls: ({ jobId }: JobRef) =>
      asActivity(async () => {
        const job = await loadExtractInfo(deps.db, jobId);
        return (await expandWildcards(deps, jobId, job.options, Context.current().cancellationSignal)) + (await searchIntoFrontier(deps, job));
      }),
    fetchExtractBatch: (input: ProcessBatchInput) =>
      asActivity(async () => {
        const { options } = await loadExtractInfo(deps.db, input.jobId);
        // Long enough that a slow page never loses its lease to a sibling mid-fetch.
        return runFrontierBatch(deps.db, input, Math.max(120_000, options.pageOptions.timeout * 3), extractPageHandler(deps, options.pageOptions));
      }),
  };
}

/** wds-control: bookkeeping only. */
export function createExtractControlActivities(deps: { db: Db }): ExtractControlActivities {
  return {
    endExtractScrape: ({ jobId, outcome, error }: EndScrapePhaseInput) =>
      asActivity(async () => {
        // The frontier row ends; a frontier that did not complete ends the job with it.
        const { status } = await finishJob(deps.db, jobId, { outcome, error });
        if (status !== 'completed') await endExtract(deps.db, jobId, status === 'cancelled' ? 'cancelled' : 'failed', error ?? 'Fetching the pages failed');
        return { status };
      }),
    extractPagesToDo: ({ jobId }: JobRef) => asActivity(() => extractDocsToDo(deps.db, jobId)),
    endExtract: ({ jobId, outcome, error }: EndExtractInput) => asActivity(async () => void (await endExtract(deps.db, jobId, outcome, error ?? null))),
  };
}

/** wds-llm: the model steps of extract jobs and of crawl prompts. */
export function createExtractLlmActivities(deps: { db: Db; client: LlmClient }): ExtractLlmActivities & CrawlParamsActivities {
  return {
    extractPage: (input) => asActivity(() => extractPage(deps, input)),
    mergeExtract: (input) => asActivity(() => mergeExtract(deps, input)),
    deriveCrawlParams: ({ jobId }: JobRef) => asActivity(() => deriveCrawlParams(deps, jobId, Context.current().cancellationSignal)),
  };
}
