import type { monitorRunWorkflow } from './workflow';
import { TaskQueues, workflowIds } from '../common';
import { crawlWords, DAY_MS, isLive, ONE_RUN, type JobSpec, type WorkflowJobSpec } from '../jobs';

/**
 * One check of a monitor (GET /v2/monitor/{id}/checks): run by its run's workflow, not its own.
 * Its public word is its outcome when it has one (`partial`, `skipped_overlap`, `skipped_no_credits`).
 * Kept for its monitor's `retentionDays` (set when it ends).
 */
export const monitorCheckJob: JobSpec = {
  kind: 'monitor_check',
  resultsKeptMs: null,
  publicStatus: (s) => (isLive(s.status) ? (s.status === 'queued' ? 'queued' : 'running') : (s.outcome ?? s.status)),
  noun: 'monitor check',
};

/** A run: the checks one tick (or one "run now") started, possibly of several teams; internal, kept a day after it ended. */
export const monitorRunJob: WorkflowJobSpec<typeof monitorRunWorkflow> = {
  kind: 'monitor_run',
  workflowType: 'monitorRunWorkflow',
  taskQueue: TaskQueues.control,
  workflowId: workflowIds.monitorRun,
  start: ONE_RUN,
  resultsKeptMs: DAY_MS,
  publicStatus: crawlWords,
  noun: 'monitor run',
};
