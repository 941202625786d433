import {
  ActivityCancellationType,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { NON_RETRYABLE_KINDS, TaskQueues, workflowIds } from '../common';
import { describeFailure } from '../failure';
import {
  subagentFinishedSignal,
  type AgentBrowserActivities,
  type AgentControlActivities,
  type AgentFetchActivities,
  type AgentLlmActivities,
  type AgentToolInput,
  type AgentToolResult,
  type AgentWorkflowInput,
  type AgentWorkflowResult,
  type ToolCallRef,
} from './contracts';
import { afterStep, newProgress, shouldHandOver, toolQueue, type StepEnd } from './decide';

const nonRetryableErrorTypes = [...NON_RETRYABLE_KINDS];
/** Tool and model activities: heartbeating, and a cancellation waits for them to stop (no work outlives the run). */
const stoppable = { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED } as const;

/**
 * An agent run: a loop of steps, each one model call (wds-llm) choosing tools, then those tools
 * on their own queues. Everything the model reads or produced lives in Postgres; this workflow
 * carries the run's id, counters and the ids of its sub-agents, and continues as new every
 * `plan.stepsPerRun` steps. Credits are reserved by each step's activities before they work, so
 * a step that would cross maxCredits never runs. The end (success, cancellation, credit limit,
 * refusal, failure) is written by one activity in a non-cancellable scope, after this run has
 * stopped the sub-agents it started.
 */
export async function agentWorkflow(input: AgentWorkflowInput): Promise<AgentWorkflowResult> {
  const { runId, plan } = input;
  const progress = input.progress ?? newProgress();
  const ended = new Set(progress.finished);
  setHandler(subagentFinishedSignal, ({ id }) => void ended.add(id));

  const control = proxyActivities<AgentControlActivities>({
    taskQueue: TaskQueues.control,
    startToCloseTimeout: '5 minutes',
    retry: { initialInterval: '500ms', maximumInterval: '30s', maximumAttempts: 20, nonRetryableErrorTypes },
  });
  const llm = proxyActivities<AgentLlmActivities>({
    taskQueue: TaskQueues.llm,
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '30s',
    ...stoppable,
    // A provider that is down or rate-limiting is waited for (Retry-After becomes the next delay).
    retry: { initialInterval: '1s', maximumInterval: '60s', maximumAttempts: 30, nonRetryableErrorTypes },
  });
  const fetchTools = proxyActivities<AgentFetchActivities>({
    taskQueue: TaskQueues.fetch,
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '20s',
    ...stoppable,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10, nonRetryableErrorTypes },
  });
  const browserTools = proxyActivities<AgentBrowserActivities>({
    taskQueue: TaskQueues.browser,
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '30s',
    ...stoppable,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 5, nonRetryableErrorTypes },
  });

  let end: NonNullable<StepEnd> | 'continue';
  try {
    if (!input.progress) {
      const start = await control.startAgentRun({ runId });
      if (start.state !== 'running' && start.state !== 'cancelling') return { state: start.state };
    }
    end = await steps();
  } catch (err) {
    if (isCancellation(err)) end = { state: 'cancelled' };
    else {
      const f = describeFailure(err);
      end = { state: 'internal', message: f.message, retryable: !(nonRetryableErrorTypes as string[]).includes(f.kind) };
    }
  }
  // Outside the try: continueAsNew ends this run by throwing, which is not a failure.
  if (end === 'continue') return await continueAsNew<typeof agentWorkflow>({ ...input, progress: { ...progress, runs: progress.runs + 1, finished: [...ended] } });
  const final = end;
  return await CancellationScope.nonCancellable(async () => {
    await stopSubagents();
    const done = await control.finishAgent({ runId, ...final });
    if (input.parentId) {
      // The parent may have ended (and stopped listening) already.
      await getExternalWorkflowHandle(workflowIds.agent(input.parentId)).signal(subagentFinishedSignal, { id: runId }).catch(() => {});
    }
    return { state: done.state };
  });

  /** Steps until the run ends, or until this workflow run should hand over to a new one. */
  async function steps(): Promise<NonNullable<StepEnd> | 'continue'> {
    for (let thisRun = 0; ; ) {
      if (shouldHandOver(thisRun, plan, workflowInfo().continueAsNewSuggested)) return 'continue';
      const step = progress.step + 1;
      const d = await llm.agentStep({ runId, step, final: step >= plan.maxSteps });
      progress.step = step;
      thisRun++;
      if (d.kind === 'credit_limit') return { state: 'credit_limit_reached' };
      if (d.kind === 'refused') return { state: 'refused' };
      if (d.kind === 'stopped') return { state: 'cancelled' };
      const results = await Promise.all(d.calls.map((c) => runTool(step, c)));
      const out = afterStep(results, progress);
      if (out) return out;
      if (step >= plan.maxSteps) return { state: 'internal', retryable: false, message: `The agent did not finish within its ${plan.maxSteps} steps.` };
    }
  }

  async function runTool(step: number, call: ToolCallRef): Promise<AgentToolResult> {
    const i: AgentToolInput = { runId, step, callId: call.id, name: call.name };
    switch (toolQueue(call.name)) {
      case 'fetch': {
        const r = await fetchTools.agentFetchTool(i);
        return r.kind === 'needs_browser' ? await browserTools.agentBrowserTool(i) : r;
      }
      case 'llm':
        return await llm.agentExtractTool(i);
      case 'control': {
        const r = await control.agentControlTool(i);
        if (r.kind === 'spawned') {
          await startSubagent(r.childId);
          return { kind: 'done' };
        }
        if (r.kind === 'wait') {
          await waitForSubagents(r.ids);
          return await control.agentSubagentResults({ ...i, ids: r.ids });
        }
        return r;
      }
    }
  }

  /**
   * Sub-agents are child workflows that outlive this run's continue-as-new (ABANDON), so this
   * workflow stops them itself when it finishes (stopSubagents): they then end `parent_finished`.
   */
  async function startSubagent(childId: string): Promise<void> {
    if (progress.children.includes(childId)) return;
    await startChild('agentWorkflow', {
      workflowId: workflowIds.agent(childId),
      taskQueue: TaskQueues.control,
      args: [{ runId: childId, rootId: input.rootId, parentId: runId, plan }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
    progress.children.push(childId);
  }

  async function waitForSubagents(ids: string[]): Promise<void> {
    for (;;) {
      if (await condition(() => ids.every((id) => ended.has(id)), '30 seconds')) return;
      // A signal lost to a parent's hand-over is found in Postgres.
      for (const id of await control.endedSubagents({ ids })) ended.add(id);
      if (ids.every((id) => ended.has(id))) return;
    }
  }

  async function stopSubagents(): Promise<void> {
    const live = progress.children.filter((id) => !ended.has(id));
    await Promise.all(live.map((id) => getExternalWorkflowHandle(workflowIds.agent(id)).cancel().catch(() => {})));
  }
}

