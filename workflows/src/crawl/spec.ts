import type { crawlWorkflow } from './workflow';
import { TaskQueues, workflowIds } from '../common';
import { crawlWords, DAY_MS, ONE_RUN, type WorkflowJobSpec } from '../jobs';

/** A crawl (POST /v2/crawl, and a monitor's crawl target). */
export const crawlJob: WorkflowJobSpec<typeof crawlWorkflow> = {
  kind: 'crawl',
  workflowType: 'crawlWorkflow',
  taskQueue: TaskQueues.control,
  workflowId: workflowIds.crawl,
  start: ONE_RUN,
  resultsKeptMs: DAY_MS,
  publicStatus: crawlWords,
  noun: 'crawl',
};

/** A batch scrape (POST /v2/batch/scrape, and the pages of a search with scrapeOptions): the crawl loop over given URLs. */
export const batchJob: WorkflowJobSpec<typeof crawlWorkflow> = { ...crawlJob, kind: 'batch', workflowId: workflowIds.batch, noun: 'batch scrape' };
