import type { scrapeWorkflow } from './workflow';
import { TaskQueues, workflowIds } from '../common';
import { type WorkflowJobSpec, ONE_RUN, isLive } from '../jobs';

/** A single scrape: GET /v2/scrape/{id} says `scraping` until it ended. Kept until deleted (a zero-data-retention scrape is deleted once answered). */
export const scrapeJob: WorkflowJobSpec<typeof scrapeWorkflow> = {
  kind: 'scrape',
  workflowType: 'scrapeWorkflow',
  taskQueue: TaskQueues.control,
  workflowId: workflowIds.scrape,
  start: ONE_RUN,
  resultsKeptMs: null,
  publicStatus: (s) => (isLive(s.status) ? 'scraping' : s.status),
  noun: 'scrape',
};
