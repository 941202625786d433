import { continueAsNew, executeChild, isCancellation, ParentClosePolicy, proxyActivities, startChild, uuid4, workflowInfo } from '@temporalio/workflow';
import { TaskQueues, workflowIds } from '../common';
import { frontierBatchOptions, frontierControlOptions, runFrontierJob } from '../crawl/loop';
import { crawlWorkflow } from '../crawl/workflow';
import type { CrawlPlan, CrawlProgress } from '../crawl/contracts';
import type { MonitorControlActivities, MonitorFetchActivities, MonitorLlmActivities, MonitorRunInput, MonitorTargetTask, MonitorTickInput, MonitorTickResult } from './contracts';

/** Runs one tick may start; monitors still due after them wait for the next tick. */
const MAX_RUNS_PER_TICK = 20;
/** Shard 0 prunes old checks (retention) on one tick an hour. */
const PRUNE_EVERY_MS = 3_600_000;

/** No more batches in flight than a run has pages for: an empty batch is a wasted activity. */
const sized = (plan: CrawlPlan, pages: number): CrawlPlan => ({ ...plan, window: Math.max(1, Math.min(plan.window, Math.ceil(pages / plan.batchSize))) });

/**
 * One tick of a shard (started by its Temporal Schedule): claim the monitors that are due —
 * each gets a check, or a skipped_overlap / skipped_no_credits record — into runs of at most
 * `maxChecksPerRun` checks (a check with crawl or search targets into a run of its own), and
 * start each run's workflow. The tick ends at once; runs go on alone (ABANDON), so a slow page
 * never holds the next tick back.
 */
export async function monitorTickWorkflow(input: MonitorTickInput): Promise<MonitorTickResult> {
  const control = proxyActivities<MonitorControlActivities>(frontierControlOptions);
  const total: MonitorTickResult = { runs: 0, checks: 0, skipped: 0 };
  const start = (runId: string, plan: CrawlPlan, targets: boolean) =>
    startChild(monitorRunWorkflow, {
      workflowId: workflowIds.monitorRun(runId),
      taskQueue: TaskQueues.control,
      args: [targets ? { runId, plan, targets } : { runId, plan }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  for (let i = 0; i < MAX_RUNS_PER_TICK; i++) {
    const runId = uuid4();
    const r = await control.claimDueMonitors({ runId, shard: input.shard, shards: input.shards, limit: input.maxChecksPerRun, catchupWindowMs: input.catchupWindowMs });
    total.skipped += r.skipped;
    if (r.checks > 0) {
      total.runs++;
      total.checks += r.checks;
      await start(runId, sized(input.plan, r.pages), false);
    }
    for (const own of r.targetRuns ?? []) {
      total.runs++;
      total.checks++;
      await start(own.runId, sized(input.plan, Math.max(1, own.pages)), true);
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
 * (the crawl loop: bounded window, heartbeats, leases, continue-as-new), pages that need the
 * model (json mode, the goal judge) go through the loop's LLM window on wds-llm, and each check
 * is summed, billed and announced as its last page is stored. A run whose check has crawl or
 * search targets runs them first (the loop's seed step, once): each crawl target's crawl job as
 * a child crawl workflow, then its collection; each search target's queries. Started by a tick,
 * or by the API for "run now".
 */
export async function monitorRunWorkflow(input: MonitorRunInput): Promise<{ status: string }> {
  const { runId, plan } = input;
  const progress: CrawlProgress = input.progress ?? { seeded: !input.targets, batches: 0, runs: 0 };
  const fetchActs = proxyActivities<MonitorFetchActivities>(frontierBatchOptions(TaskQueues.fetch));
  const llmActs = proxyActivities<MonitorLlmActivities>(frontierBatchOptions(TaskQueues.llm));
  const control = proxyActivities<MonitorControlActivities>(frontierControlOptions);

  const runTarget = async (t: MonitorTargetTask) => {
    const ref = { runId, checkId: t.checkId, targetId: t.targetId };
    if (t.type === 'search') return void (await fetchActs.runSearchTarget(ref));
    if (t.crawl) {
      try {
        await executeChild(crawlWorkflow, { workflowId: workflowIds.crawl(t.crawl.jobId), taskQueue: TaskQueues.control, args: [{ jobId: t.crawl.jobId, kind: 'crawl', plan: t.crawl.plan }] });
      } catch (err) {
        if (isCancellation(err)) throw err;
        // A failed crawl is collected as what it stored, its failure noted: known pages are still checked one by one.
      }
    }
    await fetchActs.collectCrawlTarget(ref);
  };
  const outcome = await runFrontierJob(
    { jobId: runId, plan, progress },
    {
      seed: async ({ jobId }) => Promise.all((await control.startMonitorTargets({ jobId })).map(runTarget)),
      runBatch: fetchActs.checkMonitorPages,
      runLlmBatch: llmActs.checkMonitorModelPages,
      frontierState: control.monitorRunState,
      finishJob: control.finishMonitorRun,
    },
  );
  if (outcome.done) return { status: outcome.status };
  return await continueAsNew<typeof monitorRunWorkflow>({ ...input, progress: { ...progress, runs: progress.runs + 1 } });
}
