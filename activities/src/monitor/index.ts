import type { MonitorFetchActivities, MonitorLlmActivities } from '@wds/workflows/monitor';
import type { ProcessBatchInput } from '@wds/workflows/crawl';
import { asActivity } from '../failures';
import { checkMonitorPages } from './batch';
import { collectCrawlTarget } from './crawl-target';
import { checkMonitorModelPages, type MonitorModelDeps } from './model';
import { runSearchTarget, type SearchTargetDeps } from './search-target';

export { createMonitorControlActivities, type MonitorControlDeps } from './control';
export { ensureTickSchedules, startMonitorUpkeep, type MonitorTicking } from './schedules';
export { startMonitorMailer, type MailerOptions } from './mailer';

/** Fetch-queue activities of monitor runs (they make outbound requests: pages, crawl targets' memory, searches). */
export function createMonitorFetchActivities(deps: SearchTargetDeps): MonitorFetchActivities {
  return {
    checkMonitorPages: (input: ProcessBatchInput) => asActivity(() => checkMonitorPages(deps, input)),
    collectCrawlTarget: (input) => asActivity(() => collectCrawlTarget(deps, input)),
    runSearchTarget: (input) => asActivity(() => runSearchTarget(deps, input)),
  };
}

/** LLM-queue activities of monitor runs: the model step of check pages. */
export function createMonitorLlmActivities(deps: MonitorModelDeps): MonitorLlmActivities {
  return { checkMonitorModelPages: (input) => asActivity(() => checkMonitorModelPages(deps, input)) };
}
