/** Every kind's JobSpec, by kind: what the job service, the stranded-job sweeper and the expiry path look up. */
import type { JobKind, JobSpec } from './jobs';
import { agentJob } from './agent/spec';
export { agentJobEnd, agentState, type AgentEndState } from './agent/spec';
import { catalogJob } from './catalog/spec';
import { batchJob, crawlJob } from './crawl/spec';
import { crawlParamsJob } from './crawl-params/spec';
import { extractJob } from './extract/spec';
import { interactJob } from './interact/spec';
import { mapJob } from './map/spec';
import { monitorCheckJob, monitorRunJob } from './monitor/spec';
import { parseJob } from './parse/spec';
import { scrapeJob } from './scrape/spec';

export const JOB_SPECS = {
  scrape: scrapeJob,
  crawl: crawlJob,
  batch: batchJob,
  map: mapJob,
  extract: extractJob,
  agent: agentJob,
  monitor_check: monitorCheckJob,
  monitor_run: monitorRunJob,
  interact: interactJob,
  parse: parseJob,
  catalog: catalogJob,
  crawl_params: crawlParamsJob,
} as const satisfies Record<JobKind, JobSpec>;

export { agentJob, batchJob, catalogJob, crawlJob, crawlParamsJob, extractJob, interactJob, mapJob, monitorCheckJob, monitorRunJob, parseJob, scrapeJob };
