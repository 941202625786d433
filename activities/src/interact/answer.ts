import type { InteractResponse } from '@wds/contracts';
import type { InteractionResult } from '@wds/browser';
import type { InteractCall } from '@wds/db';

/**
 * The answer of one call as POST /v2/scrape/{id}/interact returns it (Firecrawl's execution
 * shape). A prompt's answer also carries the code the model wrote (`code`) and, when it ran to
 * its end, its last value as `output`.
 */
export function answerOf(r: InteractionResult, call: Pick<InteractCall, 'code' | 'prompt' | 'generatedCode' | 'timeoutMs'>): InteractResponse {
  const a: InteractResponse = { success: r.exitCode === 0, result: r.result, stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode, killed: r.killed };
  if (r.truncated) a.truncated = true;
  if (r.error !== undefined) a.error = r.error;
  else if (r.killed) a.error = `Execution timed out after ${Math.round(call.timeoutMs / 1000)} s`;
  if (!call.code && call.prompt) {
    a.code = call.generatedCode ?? '';
    if (r.exitCode === 0) a.output = r.result ?? '';
  }
  return a;
}
