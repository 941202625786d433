import { continueAsNew, ParentClosePolicy, proxyActivities, startChild, uuid4, workflowInfo } from '@temporalio/workflow';
import { TaskQueues, workflowIds } from '../common';
import { frontierBatchOptions, frontierControlOptions, runFrontierJob } from '../crawl/loop';
import type { CrawlProgress } from '../crawl/contracts';
import type { MonitorControlActivities, MonitorFetchActivities, MonitorRunInput, MonitorTickInput, MonitorTickResult } from './contracts';

/** Runs one tick may start; monitors still due after them wait for the next tick. */
const MAX_RUNS_PER_TICK = 20;
/** Shard 0 prunes old checks (retention) on one tick an hour. */
const PRUNE_EVERY_MS = 3_600_000;

/**
 * One tick of a shard (started by its Temporal Schedule): claim the monitors that are due —
 * each gets a check, or a skipped_overlap / skipped_no_credits record — into runs of at most
 * `maxChecksPerRun` checks, and start each run's workflow. The tick ends at once; runs go on
 * alone (ABANDON), so a slow page never holds the next tick back.
 */
export async function monitorTickWorkflow(input: MonitorTickInput): Promise<MonitorTickResult> {
  const control = proxyActivities<MonitorControlActivities>(frontierControlOptions);
  const total: MonitorTickResult = { runs: 0, checks: 0, skipped: 0 };
  for (let i = 0; i < MAX_RUNS_PER_TICK; i++) {
    const runId = uuid4();
    const r = await control.claimDueMonitors({ runId, shard: input.shard, shards: input.shards, limit: input.maxChecksPerRun, catchupWindowMs: input.catchupWindowMs });
    total.skipped += r.skipped;
    if (r.checks > 0) {
      total.runs++;
      total.checks += r.checks;
      // No more batches in flight than the run has pages for: an empty batch is a wasted activity.
      const plan = { ...input.plan, window: Math.max(1, Math.min(input.plan.window, Math.ceil(r.pages / input.plan.batchSize))) };
      await startChild(monitorRunWorkflow, {
        workflowId: workflowIds.monitorRun(runId),
        taskQueue: TaskQueues.control,
        args: [{ runId, plan }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    }
    if (!r.more) break;
  }
  const tickNo = Math.floor(workflowInfo().startTime.getTime() / input.tickMs);
  if (input.shard === 0 && tickNo % Math.max(1, Math.round(PRUNE_EVERY_MS / input.tickMs)) === 0) {
    await control.pruneMonitorChecks({ limit: 5_000 });
  }
  return total;
}

/**
 * The checks of one run: their pages are the run's frontier, fetched in batches on wds-fetch
 * (the crawl loop: bounded window, heartbeats, leases, continue-as-new), and each check is
 * summed, billed and announced as its last page is stored. Started by a tick, or by the API for
 * "run now".
 */
export async function monitorRunWorkflow(input: MonitorRunInput): Promise<{ status: string }> {
  const { runId, plan } = input;
  const progress: CrawlProgress = input.progress ?? { seeded: true, batches: 0, runs: 0 };
  const fetchActs = proxyActivities<MonitorFetchActivities>(frontierBatchOptions(TaskQueues.fetch));
  const control = proxyActivities<MonitorControlActivities>(frontierControlOptions);
  const outcome = await runFrontierJob(
    { jobId: runId, plan, progress },
    { runBatch: fetchActs.checkMonitorPages, frontierState: control.monitorRunState, finishJob: control.finishMonitorRun },
  );
  if (outcome.done) return { status: outcome.status };
  return await continueAsNew<typeof monitorRunWorkflow>({ ...input, progress: { ...progress, runs: progress.runs + 1 } });
}
