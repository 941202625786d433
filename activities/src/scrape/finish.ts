import { changeTrackingOf, mediaWork, needsLlm, type ScrapeDocument, type ScrapeOptions } from '@wds/contracts';
import { completeScrapeJob, loadScrapeJob, storeScrapeDraft, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import { trackDocument, type FetchValidators, type TrackDocumentInput } from '../changes/track-document';

type FinishOptions = Pick<ScrapeOptions, 'formats' | 'onlyCleanContent' | 'redactPII' | 'zeroDataRetention' | 'lockdown'>;

/**
 * The end of a step of a scrape (the page by HTTP or browser, then the media step): the job is
 * completed, or its document is stored as a draft for the next step — the media step (wds-media)
 * when the request asks for audio or video and this is the page's step, else the LLM step
 * (wds-llm) when it asks for model-made formats. Only the flag travels back through Temporal.
 * The `changeTracking` format is answered by whichever step completes the job, and its version
 * written by the same statement.
 */
export async function finishScrapePage(
  db: Db,
  jobId: string,
  o: FinishOptions,
  document: unknown,
  credits: number,
  llmAvailable = false,
  fetched?: FetchValidators,
  step: 'page' | 'media' = 'page',
): Promise<{ needsMedia?: true; needsLlm?: true }> {
  if (step === 'page' && mediaWork(o).length) {
    await storeScrapeDraft(db, jobId, document, credits);
    return { needsMedia: true };
  }
  if (needsLlm(o, llmAvailable)) {
    // The LLM step records the version (without this fetch's validators: drafts carry documents only).
    await storeScrapeDraft(db, jobId, document, credits);
    return { needsLlm: true };
  }
  const t = await trackScrape(db, jobId, o, document as ScrapeDocument, { fetched });
  await completeScrapeJob(db, jobId, t.document, credits, t.writes);
  return {};
}

/** changeTracking for a scrape (a no-op without the format): its observation is `scrape:<id>`. */
export async function trackScrape(db: Db, jobId: string, o: FinishOptions, document: ScrapeDocument, extra: Pick<TrackDocumentInput, 'fetched' | 'extract'>) {
  if (!changeTrackingOf(o)) return { document, writes: [], modelCalls: 0 };
  const job = await loadScrapeJob(db, jobId);
  if (!job) throw new WdsError('NOT_FOUND', { message: `Scrape job ${jobId} not found` });
  return trackDocument(db, { teamId: job.teamId, sourceKey: `scrape:${jobId}`, options: o, document, ...extra });
}
