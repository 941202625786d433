import { loadInteractCall, updateInteractCall, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import { interactCodeFromPrompt, isLlmError, LlmCodes, type InteractPageView, type LlmClient } from '@wds/llm';
import type { InteractLlmActivities } from '@wds/workflows/interact';
import { asActivity } from '../failures';
import { observeModelCall, withinDeadline } from '../llm/model-step';

/** One model step's budget (the workflow's schedule-to-close bounds its retries). */
const STEP_MS = 120_000;

/**
 * wds-llm: the model writes Playwright code for a prompt call, from the page snapshot the
 * session's worker stored in the call row; a repair turn also sees the failed code and its error.
 */
export function createInteractLlmActivities(deps: { db: Db; client: LlmClient }): InteractLlmActivities {
  return {
    writeInteractCode: ({ callId, repair }) =>
      asActivity(async () => {
        const call = await loadInteractCall(deps.db, callId);
        if (!call?.prompt || !call.snapshot) throw new WdsError('NOT_FOUND', { message: `Interact call ${callId} has no prompt and page snapshot` });
        const failed = call.result as { error?: string; killed?: boolean } | null;
        const previous = repair && call.generatedCode ? { code: call.generatedCode, error: failed?.error ?? (failed?.killed ? 'timed out' : 'failed') } : undefined;
        const model = deps.client.config.model;
        try {
          const r = await withinDeadline(Date.now() + STEP_MS, (signal) =>
            observeModelCall(model, 'interact', () => 0, () => interactCodeFromPrompt(deps.client, { prompt: call.prompt!, page: call.snapshot as InteractPageView, previous, signal })),
          );
          if (!r.ok) throw new WdsError('REQUEST_TIMEOUT', { code: 'LLM_TIMEOUT', message: `Request Timeout: the model did not write code for the prompt within ${STEP_MS / 1000} s` });
          await updateInteractCall(deps.db, callId, { generatedCode: r.value.code });
        } catch (e) {
          if (isLlmError(e) && e.code === LlmCodes.CANNOT_CONFORM) {
            throw new WdsError('UNPROCESSABLE', { code: LlmCodes.CANNOT_CONFORM, message: 'The model could not write Playwright code for the prompt. Rephrase it, or send `code` instead.' });
          }
          throw e;
        }
      }),
  };
}
