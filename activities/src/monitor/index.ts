import type { MonitorFetchActivities } from '@wds/workflows/monitor';
import type { ProcessBatchInput } from '@wds/workflows/crawl';
import { asActivity } from '../failures';
import type { PageDeps } from '../scrape/pipeline';
import { checkMonitorPages } from './batch';

export { createMonitorControlActivities, type MonitorControlDeps } from './control';
export { ensureTickSchedules, startMonitorUpkeep, type MonitorTicking } from './schedules';

/** Fetch-queue activities of monitor runs (they make outbound requests). */
export function createMonitorFetchActivities(deps: PageDeps): MonitorFetchActivities {
  return { checkMonitorPages: (input: ProcessBatchInput) => asActivity(() => checkMonitorPages(deps, input)) };
}
