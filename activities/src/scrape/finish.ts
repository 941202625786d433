import { needsLlm, type ScrapeOptions } from '@wds/contracts';
import { completeScrapeJob, storeScrapeDraft, type Db } from '@wds/db';

/**
 * The end of a scrape's page step (HTTP or browser): the job is completed, or, when the request
 * asks for model-made formats, its page is stored as a draft for the LLM step (wds-llm), which
 * completes it. Only the flag travels back through Temporal.
 */
export async function finishScrapePage(
  db: Db,
  jobId: string,
  o: Pick<ScrapeOptions, 'formats' | 'onlyCleanContent' | 'redactPII'>,
  document: unknown,
  credits: number,
  llmAvailable = false,
): Promise<{ needsLlm?: true }> {
  if (needsLlm(o, llmAvailable)) {
    await storeScrapeDraft(db, jobId, document, credits);
    return { needsLlm: true };
  }
  await completeScrapeJob(db, jobId, document, credits);
  return {};
}
