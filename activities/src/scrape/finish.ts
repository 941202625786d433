import { mediaWork, needsLlm, type ScrapeOptions } from '@wds/contracts';
import { completeScrapeJob, storeScrapeDraft, type Db } from '@wds/db';

/**
 * The end of a step of a scrape (the page by HTTP or browser, then the media step): the job is
 * completed, or its document is stored as a draft for the next step — the media step (wds-media)
 * when the request asks for audio or video and this is the page's step, else the LLM step
 * (wds-llm) when it asks for model-made formats. Only the flag travels back through Temporal.
 */
export async function finishScrapePage(
  db: Db,
  jobId: string,
  o: Pick<ScrapeOptions, 'formats' | 'onlyCleanContent' | 'redactPII'>,
  document: unknown,
  credits: number,
  llmAvailable = false,
  step: 'page' | 'media' = 'page',
): Promise<{ needsMedia?: true; needsLlm?: true }> {
  if (step === 'page' && mediaWork(o).length) {
    await storeScrapeDraft(db, jobId, document, credits);
    return { needsMedia: true };
  }
  if (needsLlm(o, llmAvailable)) {
    await storeScrapeDraft(db, jobId, document, credits);
    return { needsLlm: true };
  }
  await completeScrapeJob(db, jobId, document, credits);
  return {};
}
