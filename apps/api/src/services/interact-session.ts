import { interactUpdate, stopInteractUpdate, type InteractCallInput, type InteractStopResult } from '@wds/workflows/interact';
import { interactJob } from '@wds/workflows/job-specs';
import type { ApiDeps } from '../deps';
import { asInteractError, updateFailureCode } from '../temporal';
import { updateJob, updateWithStartJob } from './jobs';

/**
 * The interact session's workflow as the API drives it, through the job service: a call is an
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
    updateWithStartJob(deps, interactJob, {
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
    return await updateJob(deps, interactJob, { key: scrapeId, update: stopInteractUpdate, budgetMs: STOP_BUDGET_MS, what: 'the session stop' });
  } catch (e) {
    throw asInteractError(e);
  }
}
