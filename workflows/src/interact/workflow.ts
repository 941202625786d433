import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
  TemporalFailure,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import { NON_RETRYABLE_KINDS, TaskQueues } from '../common';
import {
  interactUpdate,
  stopInteractUpdate,
  type InteractCallInput,
  type InteractControlActivities,
  type InteractLlmActivities,
  type InteractReplayActivities,
  type InteractSessionActivities,
  type InteractStopResult,
  type InteractWorkflowInput,
} from './contracts';
import { pageLoss, sessionBusy, sessionEnding, sessionExpired, type PageLoss } from './loss';

/** A session queue's task not picked up within this: the worker holding the page is gone. */
const SESSION_PICKUP_MS = 10_000;
/** A replay nobody picks up within this: no browser worker is running. */
const REPLAY_PICKUP_MS = 30_000;
/** A model step for a prompt (its provider's retries included). */
const MODEL_BUDGET_MS = 180_000;

/**
 * One interact session: calls (updates) one at a time on the browser worker that holds the page,
 * until DELETE (the `stopInteract` update), `idleMs` without a call, `maxLifeMs` after it opened
 * (a durable timer: a session cannot be held forever by calling it), or the loss of the page. The
 * first call opens the session — the scrape's own page if its worker still keeps it, else a replay
 * of the scrape on any browser worker. User code never runs twice: a session activity is never
 * retried. A lost page (worker killed, renderer crashed) fails the call that found out, ends the
 * session, and the next call starts a new one by replaying.
 */
export async function interactWorkflow(input: InteractWorkflowInput): Promise<void> {
  const { scrapeId, teamId, idleMs } = input;
  // Runs started before sessions had a maximum life keep none.
  const lifeLimited = patched('interact-max-life') && input.maxLifeMs !== undefined;
  const retryable = { nonRetryableErrorTypes: [...NON_RETRYABLE_KINDS] };
  const control = proxyActivities<InteractControlActivities>({ taskQueue: TaskQueues.control, startToCloseTimeout: '30s', retry: { maximumAttempts: 10, ...retryable } });
  const llm = proxyActivities<InteractLlmActivities>({
    taskQueue: TaskQueues.llm,
    scheduleToCloseTimeout: MODEL_BUDGET_MS,
    startToCloseTimeout: MODEL_BUDGET_MS,
    heartbeatTimeout: '10s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', ...retryable },
  });
  const onWorker = (queue: string, runMs: number) =>
    proxyActivities<InteractSessionActivities>({
      taskQueue: queue,
      scheduleToStartTimeout: SESSION_PICKUP_MS,
      startToCloseTimeout: runMs,
      heartbeatTimeout: '10s',
      retry: { maximumAttempts: 1 },
    });

  let queue = input.queue;
  let slotId = input.slotId ?? null;
  let busy = false;
  let stopRequested = false;
  let loss: PageLoss | undefined;
  let closing = false;
  let stopped: InteractStopResult | undefined;
  let lifeEndsAt = input.lifeEndsAt;
  let expired = false;
  const ref = () => ({ scrapeId, teamId, idleMs, slotId, ...(lifeEndsAt !== undefined ? { lifeEndsAt } : {}) });
  const lifeLeft = () => (lifeEndsAt === undefined ? Infinity : lifeEndsAt - Date.now());

  /** A call on the page's worker; a lost page ends the session (the error says what happened). */
  async function onPage<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      const l = pageLoss(err);
      if (!l) throw err;
      loss ??= l;
      queue = undefined;
      throw l.failure;
    }
  }

  /** Opens the session; its life starts once it is open (the worker holding it is told when it ends, as a backstop). */
  async function open(call: InteractCallInput): Promise<string> {
    const ends = lifeEndsAt ?? (lifeLimited ? Date.now() + input.maxLifeMs! : undefined);
    const q = await openPage(call, ends);
    lifeEndsAt = ends;
    return q;
  }

  async function openPage(call: InteractCallInput, ends: number | undefined): Promise<string> {
    const opening = { ...ref(), ...(ends !== undefined ? { lifeEndsAt: ends } : {}) };
    // The call's concurrency slot becomes the session's (one from a failed earlier opening was freed by its API call).
    if (call.slotId) slotId = call.slotId;
    const parked = await control.findParkedPage({ scrapeId });
    // A call that passed the API's check as the expired session was closing must not open it again.
    if (parked && 'expired' in parked) throw sessionExpired(input.maxLifeMs ?? 0);
    if (parked) {
      try {
        const adopted = await onWorker(parked.queue, 60_000).adoptSession({ ...opening, slotId });
        if (adopted) return adopted.queue;
      } catch (err) {
        // The worker that rendered the scrape is gone: replay below.
        if (!pageLoss(err)) throw err;
      }
    }
    const { replaySession } = proxyActivities<InteractReplayActivities>({
      taskQueue: TaskQueues.browser,
      scheduleToStartTimeout: REPLAY_PICKUP_MS,
      startToCloseTimeout: call.openTimeoutMs + 5_000,
      heartbeatTimeout: '10s',
      // A crashed browser during the replay is retried once; user code has not run yet.
      retry: { maximumAttempts: 2, ...retryable },
    });
    try {
      return (await replaySession({ ...opening, slotId, deadlineMs: Date.now() + call.openTimeoutMs })).queue;
    } catch (err) {
      if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START') {
        throw ApplicationFailure.create({
          type: 'SERVICE_UNAVAILABLE',
          nonRetryable: true,
          message: 'Service Unavailable: no browser worker took the session within 30 s (start one serving wds-browser)',
          details: [{ code: 'BROWSER_UNAVAILABLE' }],
        });
      }
      throw err;
    }
  }

  async function run(call: InteractCallInput, q: string): Promise<void> {
    const worker = onWorker(q, call.timeoutMs + 30_000);
    const exec = () => onPage(() => worker.runInteraction({ scrapeId, callId: call.callId, idleMs }));
    if (call.mode === 'code') {
      await exec();
      return;
    }
    await onPage(() => worker.snapshotSession({ scrapeId, callId: call.callId }));
    await llm.writeInteractCode({ callId: call.callId, repair: false });
    if (!(await exec()).failed) return;
    // One repair turn: the model sees its code and the error.
    await llm.writeInteractCode({ callId: call.callId, repair: true });
    await exec();
  }

  setHandler(
    interactUpdate,
    async (call) => {
      busy = true;
      try {
        const q = queue ?? (queue = await open(call));
        await run(call, q);
      } catch (err) {
        throw asUpdateFailure(err);
      } finally {
        busy = false;
      }
    },
    {
      validator: (_call: InteractCallInput) => {
        if (expired) throw sessionExpired(input.maxLifeMs!);
        if (closing || loss || stopRequested) throw sessionEnding();
        if (busy) throw sessionBusy();
      },
    },
  );
  setHandler(stopInteractUpdate, async () => {
    stopRequested = true;
    await condition(() => stopped !== undefined);
    return stopped!;
  });

  let reason = 'idle';
  for (;;) {
    // Until a call, the idle timeout or the end of the session's life, whichever comes first.
    const used = await condition(() => busy || stopRequested || !!loss, Math.max(1, Math.min(idleMs, lifeLeft())));
    if (stopRequested) reason = 'stopped';
    else if (loss) reason = loss.reason;
    if (!used || stopRequested || loss) break;
    await condition(() => !busy);
    if (workflowInfo().continueAsNewSuggested && !stopRequested && !loss && lifeLeft() > 0) {
      closing = true;
      await condition(allHandlersFinished);
      await continueAsNew<typeof interactWorkflow>({ ...input, queue, slotId, lifeEndsAt });
    }
  }
  // A call that was running when the life ended finished first (at most its own timeout late).
  if (!stopRequested && !loss && lifeLeft() <= 0) {
    reason = 'expired';
    expired = true;
  }
  closing = true;
  await condition(() => !busy);
  if (stopRequested) reason = 'stopped';

  // The page's state goes back to a saving profile when the session stops or idles out; a lost page has nothing to save.
  let profileSaved = false;
  if (queue && !loss) {
    try {
      profileSaved = (await onWorker(queue, 60_000).closeSession({ scrapeId, save: true })).profileSaved;
    } catch {
      // The worker went away meanwhile: the page and its state with it.
    }
  }
  const billed = await control.endInteractSession({ scrapeId, teamId, reason, slotId });
  stopped = { profileSaved, ...billed };
  await condition(allHandlersFinished);
}

/** What the caller sees of a failed call: the activity's own failure (its kind and code), never a workflow task failure. */
function asUpdateFailure(err: unknown): unknown {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) return err.cause;
  if (err instanceof TemporalFailure) return err;
  return ApplicationFailure.create({ type: 'INTERNAL', message: err instanceof Error ? err.message : String(err) });
}
