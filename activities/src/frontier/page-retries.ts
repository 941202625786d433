import { failPage, type ClaimedUrl, type Db } from '@wds/db';
import { toWdsError } from '@wds/errors';
import type { BatchRun, PageOutcome } from './batch-runner';

/** Retries of a page inside its batch for transient failures, before it is recorded as failed. */
const INLINE_RETRIES = 2;

/**
 * Runs a page's work, retrying transient failures inside the batch; a page that still fails is
 * recorded as failed with its error (GET …/errors). A cancelled batch leaves the page to the job's end.
 */
export async function withInlineRetries(db: Db, jobId: string, u: ClaimedUrl, run: BatchRun, work: () => Promise<PageOutcome>): Promise<PageOutcome> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (e) {
      if (run.signal.aborted) return 'skipped'; // cancelled: the job's end marks what is left
      const err = toWdsError(e);
      if (err.retryable && attempt < INLINE_RETRIES) {
        await run.sleep(300 * (attempt + 1));
        continue;
      }
      await failPage(db, jobId, u.key, 'failed', err.message);
      return 'failed';
    }
  }
}
