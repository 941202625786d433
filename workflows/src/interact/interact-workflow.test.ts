import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { ApplicationFailure, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { until } from '@wds/test-utils';
import { nonRetryable, startFakeWorkers, type FakeWorkers } from '@wds/test-utils/workflow-env';
import { TaskQueues, workflowIds } from '../common';
import { browserSessionQueue, interactUpdate, stopInteractUpdate, type InteractCallInput, type InteractWorkflowInput } from './contracts';

// The interact session workflow (./workflow.ts) against fake activities: how a session opens
// (adopting the scrape's parked page or replaying it), runs calls one at a time on the worker
// holding the page, and ends (stop, idle, maximum life, page lost), billed once.
const ACTIVITIES = ['findParkedPage', 'endInteractSession', 'replaySession', 'adoptSession', 'snapshotSession', 'runInteraction', 'closeSession', 'writeInteractCode'];
const PARKED = browserSessionQueue('parked-worker');
const REPLAYED = browserSessionQueue('replay-worker');
let w: FakeWorkers;
before(async () => void (w = await startFakeWorkers(import.meta.url, ACTIVITIES, [PARKED, REPLAYED])));
after(async () => await w?.stop());

const billed = { durationMs: 1_234, credits: 2 };
/** A session whose scrape's page is still parked on PARKED; code runs and succeeds. */
function session(extra: Record<string, (i: any) => Promise<unknown>> = {}) {
  return {
    findParkedPage: async () => ({ queue: PARKED }),
    adoptSession: async () => ({ queue: PARKED }),
    replaySession: async () => ({ queue: REPLAYED }),
    runInteraction: async () => ({ failed: false }),
    snapshotSession: async () => undefined,
    writeInteractCode: async () => undefined,
    closeSession: async () => ({ profileSaved: true }),
    endInteractSession: async () => billed,
    ...extra,
  };
}
const call = (mode: 'code' | 'prompt' = 'code', extra: Partial<InteractCallInput> = {}): InteractCallInput => ({ callId: randomUUID(), mode, timeoutMs: 5_000, openTimeoutMs: 10_000, slotId: 'slot-1', ...extra });

async function open(opts: Partial<InteractWorkflowInput> = {}) {
  const scrapeId = randomUUID();
  const input: InteractWorkflowInput = { scrapeId, teamId: 'team-1', idleMs: 60_000, maxLifeMs: 600_000, ...opts };
  const handle = await w.client.workflow.start('interactWorkflow', { taskQueue: TaskQueues.control, workflowId: workflowIds.interact(scrapeId), args: [input] });
  return { scrapeId, handle };
}
const send = (h: WorkflowHandle, c: InteractCallInput) => h.executeUpdate(interactUpdate, { args: [c] });
/** The failure a call answered (the update's cause), or a test failure if it succeeded. */
async function callFailure(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(() => assert.fail('the call must fail'), (e: unknown) => e);
  assert.ok(err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure, String(err));
  return err.cause;
}
const codeOf = (f: ApplicationFailure) => (f.details?.[0] as { code?: string } | undefined)?.code;
const inputsOf = (name: string) => w.calls.filter((c) => c.name === name).map((c) => c.input);
/** The task queues the workflow scheduled `activity` on, in order (from its history). */
async function queuesOf(h: WorkflowHandle, activity: string): Promise<string[]> {
  const { events } = await h.fetchHistory();
  return events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity).map((e) => e.activityTaskScheduledEventAttributes!.taskQueue!.name!);
}

test('interact: the first call adopts the parked page; later calls run on its worker; a stop saves the profile and bills once', async () => {
  const { scrapeId, handle } = await open();
  w.use(session());
  const first = call();
  const second = call();
  await send(handle, first);
  await send(handle, second);
  const stopped = await handle.executeUpdate(stopInteractUpdate);
  await handle.result();

  assert.deepEqual(stopped, { profileSaved: true, ...billed });
  assert.deepEqual(w.names(), ['findParkedPage', 'adoptSession', 'runInteraction', 'runInteraction', 'closeSession', 'endInteractSession']);
  const adopt = inputsOf('adoptSession')[0] as { lifeEndsAt?: number; slotId?: string };
  assert.equal(adopt.slotId, 'slot-1', "the call's concurrency slot becomes the session's");
  assert.ok(typeof adopt.lifeEndsAt === 'number', 'the worker is told when the life ends');
  assert.deepEqual(inputsOf('runInteraction'), [first, second].map((c) => ({ scrapeId, callId: c.callId, idleMs: 60_000 })));
  for (const a of ['adoptSession', 'runInteraction', 'closeSession']) assert.ok((await queuesOf(handle, a)).every((q) => q === PARKED), `${a} on the parked page's worker`);
  assert.deepEqual(inputsOf('closeSession'), [{ scrapeId, save: true }]);
  assert.deepEqual(inputsOf('endInteractSession'), [{ scrapeId, teamId: 'team-1', reason: 'stopped', slotId: 'slot-1' }]);
});

test('interact: with no parked page the session is opened by a replay, and its calls go to the replaying worker', async () => {
  const { handle } = await open();
  w.use(session({ findParkedPage: async () => null }));
  const c = call();
  await send(handle, c);
  await handle.executeUpdate(stopInteractUpdate);

  assert.deepEqual(w.names(), ['findParkedPage', 'replaySession', 'runInteraction', 'closeSession', 'endInteractSession']);
  const replay = inputsOf('replaySession')[0] as { deadlineMs: number };
  assert.ok(replay.deadlineMs > Date.now() - 60_000 && replay.deadlineMs <= Date.now() + c.openTimeoutMs, 'the replay gets the call\'s open budget');
  assert.deepEqual(await queuesOf(handle, 'replaySession'), [TaskQueues.browser], 'any browser worker replays');
  assert.deepEqual(await queuesOf(handle, 'runInteraction'), [REPLAYED], "the code runs on the replaying worker's own queue");
});

test('interact: a prompt call snapshots the page, has the model write code, and gets one repair turn when the code fails', async () => {
  const { handle } = await open();
  let runs = 0;
  w.use(session({ runInteraction: async () => ({ failed: ++runs === 1 }) }));
  const c = call('prompt');
  await send(handle, c);
  await handle.executeUpdate(stopInteractUpdate);

  assert.deepEqual(w.names('snapshotSession', 'writeInteractCode', 'runInteraction'), ['snapshotSession', 'writeInteractCode', 'runInteraction', 'writeInteractCode', 'runInteraction']);
  assert.deepEqual(inputsOf('writeInteractCode'), [
    { callId: c.callId, repair: false },
    { callId: c.callId, repair: true },
  ]);
});

test('interact: a session unused for idleMs closes (profile saved) and is billed with reason idle', async () => {
  const { scrapeId, handle } = await open({ idleMs: 700 });
  w.use(session());
  await send(handle, call());
  const t0 = Date.now();
  await handle.result();

  assert.ok(Date.now() - t0 >= 500, 'not before the idle time');
  assert.deepEqual(w.names().slice(-2), ['closeSession', 'endInteractSession']);
  assert.deepEqual(inputsOf('endInteractSession'), [{ scrapeId, teamId: 'team-1', reason: 'idle', slotId: 'slot-1' }]);
});

test('interact: a session that is called again and again still ends at its maximum life, not its idle time', async () => {
  const { scrapeId, handle } = await open({ idleMs: 60_000, maxLifeMs: 1_500 });
  w.use(session());
  const t0 = Date.now();
  const closed = async () => (await handle.describe()).status.name !== 'RUNNING';
  // Calls keep coming; those that arrive as it ends are refused (ending or expired), which is fine here.
  while (!(await closed()) && Date.now() - t0 < 20_000) await send(handle, call()).catch(() => {});
  const lived = Date.now() - t0;

  assert.ok(lived >= 1_400 && lived < 15_000, `ended after ${lived} ms (life 1.5 s, idle 60 s)`);
  assert.ok(w.names('runInteraction').length >= 2, 'calls ran while it lived');
  assert.deepEqual(inputsOf('endInteractSession'), [{ scrapeId, teamId: 'team-1', reason: 'expired', slotId: 'slot-1' }]);
});

test('interact: a page gone from its worker fails the call that found out, ends the session without closing it, and bills reason gone', async () => {
  const { scrapeId, handle } = await open();
  w.use(
    session({
      runInteraction: async () => {
        throw nonRetryable('GONE', 'Gone: the page was closed', 'SESSION_GONE');
      },
    }),
  );
  const failure = await callFailure(send(handle, call()));
  await handle.result();

  assert.equal(failure.type, 'GONE');
  assert.equal(codeOf(failure), 'SESSION_ENDED');
  assert.match(failure.message, /next call starts a new session/);
  assert.deepEqual(w.names('closeSession'), [], 'a lost page has nothing to save');
  assert.deepEqual(inputsOf('endInteractSession'), [{ scrapeId, teamId: 'team-1', reason: 'gone', slotId: 'slot-1' }]);
  assert.equal(w.names('runInteraction').length, 1, 'user code never runs twice');
});

test('interact: a crashed renderer ends the session as crashed', async () => {
  const { handle } = await open();
  w.use(
    session({
      runInteraction: async () => {
        throw nonRetryable('BAD_GATEWAY', 'Target crashed', 'BROWSER_CRASHED');
      },
    }),
  );
  const failure = await callFailure(send(handle, call()));
  await handle.result();

  assert.equal(codeOf(failure), 'BROWSER_CRASHED');
  assert.equal((inputsOf('endInteractSession')[0] as { reason: string }).reason, 'crashed');
});

test("interact: a call's own failure (the model) fails only that call: the session goes on", async () => {
  const { handle } = await open();
  w.use(
    session({
      writeInteractCode: async () => {
        throw nonRetryable('UNPROCESSABLE', 'Unprocessable: the model wrote no code');
      },
    }),
  );
  const failure = await callFailure(send(handle, call('prompt')));
  assert.equal(failure.type, 'UNPROCESSABLE');
  assert.equal(failure.message, 'Unprocessable: the model wrote no code');
  await send(handle, call());
  await handle.executeUpdate(stopInteractUpdate);

  assert.equal(w.names('writeInteractCode').length, 1, 'not retried');
  assert.deepEqual(w.names('findParkedPage'), ['findParkedPage'], 'one session for both calls');
  assert.equal((inputsOf('endInteractSession')[0] as { reason: string }).reason, 'stopped');
});

test('interact: a call while another runs is refused as busy, and the running one is not disturbed', async () => {
  const { handle } = await open();
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  w.use(
    session({
      runInteraction: async () => {
        await released;
        return { failed: false };
      },
    }),
  );
  const first = send(handle, call());
  await until(() => w.names('runInteraction').length === 1, 'the first call running', { timeoutMs: 10_000 });
  const busy = await callFailure(send(handle, call()));
  release();
  await first;
  await handle.executeUpdate(stopInteractUpdate);

  assert.equal(busy.type, 'CONFLICT');
  assert.equal(codeOf(busy), 'SESSION_BUSY');
  assert.equal(w.names('runInteraction').length, 1);
});

test("interact: a call on a scrape whose session reached its maximum life is refused as expired and opens nothing", async () => {
  const { handle } = await open();
  w.use(session({ findParkedPage: async () => ({ expired: true }) }));
  const failure = await callFailure(send(handle, call()));
  await handle.executeUpdate(stopInteractUpdate);

  assert.equal(codeOf(failure), 'SESSION_EXPIRED');
  assert.deepEqual(w.names('adoptSession', 'replaySession', 'runInteraction', 'closeSession'), []);
});
