/**
 * One interaction: Playwright code run against a live page, in the page's code sandbox, within a
 * timeout. The answer is Firecrawl's execution shape (result, stdout, stderr, exitCode, killed);
 * an exception in the code is part of the answer, not a failure. Only the page itself going away
 * (renderer crash, browser death, session closed) fails the call, with the page's reason.
 */
import { abortReason } from '../errors';
import { Bridge } from './bridge';
import type { LivePage } from './live-page';
import type { SandboxOutcome } from './sandbox';

export interface InteractionRequest {
  /** Playwright (Node) code; `page` is the session's page, `await` works at top level. */
  code: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface InteractionResult extends SandboxOutcome {
  /** 0 done, 1 the code threw, 124 the timeout ended it. */
  exitCode: number;
}

/** exitCode of a call the timeout ended (timeout(1)'s convention). */
export const KILLED_EXIT_CODE = 124;

export async function runInteraction(live: LivePage, req: InteractionRequest): Promise<InteractionResult> {
  if (req.signal?.aborted) throw abortReason(req.signal);
  const deadline = performance.now() + req.timeoutMs;
  const sandbox = await live.codeSandbox();
  const bridge = new Bridge(live, deadline);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - performance.now()));
    onAbort = () => resolve();
    req.signal?.addEventListener('abort', onAbort, { once: true });
  });
  const gone = live.whenGone();
  try {
    const begin = { url: live.page.url(), viewport: live.page.viewportSize() };
    const outcome = await Promise.race([sandbox.run(req.code, bridge, begin, stop), gone.then((e) => Promise.reject(e))]);
    if (req.signal?.aborted) throw abortReason(req.signal);
    // A refused page value is said in stderr too, so the answer shows it even when the code caught the error.
    const stderr = bridge.notes.length ? `${outcome.stderr}${bridge.notes.join('\n')}\n` : outcome.stderr;
    return { ...outcome, stderr, exitCode: outcome.killed ? KILLED_EXIT_CODE : outcome.error !== undefined ? 1 : 0 };
  } catch (e) {
    bridge.close();
    if (live.gone) void sandbox.close();
    throw e;
  } finally {
    clearTimeout(timer);
    if (onAbort) req.signal?.removeEventListener('abort', onAbort);
  }
}
