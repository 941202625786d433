import { WdsError } from '@wds/errors';
import { interactUpdate, stopInteractUpdate, type InteractCallInput, type InteractStopResult } from '@wds/workflows/interact';
import { interactJob } from '@wds/workflows/job-specs';
import type { ApiDeps } from '../deps';
import { failureToWdsError, updateFailureCode } from '../temporal';

/**
 * The interact session's workflow as the API drives it, by its JobSpec (deps.workflows; not
 * startJob: the start and the update must be one Temporal call, or the update could land in a run
 * that ended between the two, and the kind has no jobs row a refusal would fail): a call is an
 * update of the scrape's session (opening it if none runs), a stop is the stop update.
 */

/** How long an ending session may take to close before a call opens the next one. */
const ENDING_WAIT_MS = 30_000;
/** Closing saves a profile and bills: seconds; a minute means the session's workers are not answering. */
const STOP_BUDGET_MS = 60_000;

/**
 * POST /v2/scrape/{id}/interact: one call in the scrape's session, starting the session's
 * workflow if none runs; waits for the call's end within `budgetMs`.
 */
export async function interactCall(
  deps: ApiDeps,
  input: { scrapeId: string; teamId: string; idleMs: number; maxLifeMs: number; call: InteractCallInput; budgetMs: number },
): Promise<void> {
  const { scrapeId, teamId, idleMs, maxLifeMs, call, budgetMs } = input;
  const attempt = (ms: number) =>
    deps.workflows.updateWithStart(interactJob, {
      key: scrapeId,
      // One session per scrape at a time (the spec's id policies); a new one once the last has ended.
      args: [{ scrapeId, teamId, idleMs, maxLifeMs }],
      update: interactUpdate,
      updateArgs: [call],
      budgetMs: ms,
      what: 'the interact call',
    });
  const t0 = Date.now();
  try {
    await attempt(budgetMs);
  } catch (e) {
    // The session was ending as the call came: once it has, the call opens a new one.
    if (updateFailureCode(e) !== 'SESSION_ENDING') throw asInteractError(e);
    await deps.workflows.result(interactJob, { key: scrapeId, budgetMs: ENDING_WAIT_MS }).catch(() => {});
    await attempt(Math.max(1_000, budgetMs - (Date.now() - t0))).catch((e2) => {
      throw asInteractError(e2);
    });
  }
}

/** DELETE /v2/scrape/{id}/interact: ends the running session; null when none runs. */
export async function stopInteract(deps: ApiDeps, scrapeId: string): Promise<InteractStopResult | null> {
  try {
    return await deps.workflows.update(interactJob, { key: scrapeId, update: stopInteractUpdate, budgetMs: STOP_BUDGET_MS, what: 'the session stop' });
  } catch (e) {
    throw asInteractError(e);
  }
}

/** An interact call's failure as the API answers it; the client's own deadline is a 504 (the call may still finish in the session). */
function asInteractError(e: unknown): WdsError {
  if (e instanceof Error && /did not finish[a-z ]* within \d+ ms/.test(e.message)) {
    return new WdsError('GATEWAY_TIMEOUT', { code: 'INTERACT_TIMEOUT', message: `Gateway Timeout: ${e.message}; the session may still be running it` });
  }
  return failureToWdsError(e);
}
