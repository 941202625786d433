import { createRequire } from 'node:module';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, type Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, makeTelemetryFilterString, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { ALL_QUEUES, TaskQueues } from '@wds/workflows/common';
import { namespaceFor, testInfra } from './stack';

/**
 * Workflow tests with fake activities (Temporal's way to test workflow logic): the real workflow
 * code, bundled once per file, on a real Temporal server — the dev server scripts/test.mjs started,
 * in the file's own namespace (`TestWorkflowEnvironment.createFromExistingServer`; the SDK's
 * time-skipping server is a download this machine cannot make, so timers run in real time and
 * tests keep them short). One worker per task queue the workflows use, all serving the same fakes;
 * each activity call is recorded in order, with its input.
 */
export interface ActivityCall {
  name: string;
  input: unknown;
  /** The workflow run that called it (runs change at continue-as-new). */
  runId: string;
}

export type Fakes = Record<string, (input: any) => Promise<unknown>>;

export interface FakeWorkers {
  env: TestWorkflowEnvironment;
  client: Client;
  /** Every activity call since the last `use`, in the order they started. */
  calls: ActivityCall[];
  /** Replaces the fakes (an activity without one fails non-retryably, naming itself) and clears `calls`. */
  use(fakes: Fakes): void;
  /** The names of the calls so far, optionally only those of `names`. */
  names(...only: string[]): string[];
  stop(): Promise<void>;
}

const require = createRequire(import.meta.url);
let bundle: Promise<WorkflowBundle> | undefined;
let runtimeInstalled = false;

/** A non-retryable activity failure of one of @wds/errors' kinds, as the real activities throw it. */
export function nonRetryable(kind: string, message: string, code?: string): ApplicationFailure {
  return ApplicationFailure.create({ type: kind, nonRetryable: true, message, details: code ? [{ code }] : undefined });
}

/**
 * Starts workers for `activityNames` (every name the file's workflows may call) on every WDS queue
 * plus `extraQueues` (an interact session's own queue), with the workflows on wds-control.
 */
export async function startFakeWorkers(testFileUrl: string, activityNames: string[], extraQueues: string[] = []): Promise<FakeWorkers> {
  if (!runtimeInstalled) {
    runtimeInstalled = true;
    // Quiet: the failure tests fail workflow tasks on purpose, which the SDK core logs as warnings.
    Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR', other: 'ERROR' }), forward: {} } } });
  }
  bundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('@wds/workflows'), logger: new DefaultLogger('ERROR') });
  const env = await TestWorkflowEnvironment.createFromExistingServer({ address: testInfra().temporalAddress, namespace: namespaceFor(testFileUrl) });
  let fakes: Fakes = {};
  const calls: ActivityCall[] = [];
  const activities = Object.fromEntries(
    activityNames.map((name) => [
      name,
      async (input: unknown) => {
        calls.push({ name, input, runId: Context.current().info.workflowExecution?.runId ?? '' });
        const fake = fakes[name];
        if (!fake) throw nonRetryable('INTERNAL', `no fake for activity ${name}`);
        return await fake(input);
      },
    ]),
  );
  const workflowBundle = await bundle;
  const workers = await Promise.all(
    [...ALL_QUEUES, ...extraQueues].map((taskQueue) =>
      Worker.create({
        connection: env.nativeConnection,
        namespace: env.namespace,
        taskQueue,
        activities,
        // A cancellation reaches an activity with its next heartbeat's answer: no throttling to wait out.
        maxHeartbeatThrottleInterval: '50ms',
        defaultHeartbeatThrottleInterval: '50ms',
        ...(taskQueue === TaskQueues.control ? { workflowBundle } : {}),
      }),
    ),
  );
  const running = workers.map((w) => w.run());
  return {
    env,
    client: env.client,
    calls,
    use(next) {
      fakes = next;
      calls.length = 0;
    },
    names: (...only) => calls.map((c) => c.name).filter((n) => !only.length || only.includes(n)),
    async stop() {
      for (const w of workers) w.shutdown();
      await Promise.all(running);
      await env.teardown();
    },
  };
}

/** An activity that heartbeats until it is cancelled (then fails with the cancellation, as the real ones do). */
export async function untilCancelled(): Promise<never> {
  const ctx = Context.current();
  for (;;) {
    ctx.heartbeat();
    await ctx.sleep(50);
  }
}


/** How a workflow ended within `ms`: its result, its failure, or 'still running' (a workflow task failing forever never ends). */
export async function endedWithin(handle: { result(): Promise<unknown> }, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((r) => (timer = setTimeout(() => r('still running'), ms)));
  try {
    return await Promise.race([handle.result().then(() => 'completed', (e: unknown) => e), late]);
  } finally {
    clearTimeout(timer);
  }
}
