import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import { mediaWork, type MediaFormatType, type ScrapeDocument, type ScrapeOptions } from '@wds/contracts';
import { loadScrapeJob, type Db } from '@wds/db';
import type { MediaDraft } from '@wds/documents';
import { WdsError } from '@wds/errors';
import { extractMedia, type GuardedProxy, type MediaTools } from '@wds/media';
import { scrapeFileKey, type FileStore } from '@wds/storage';
import type { ExtractScrapeMediaInput, MediaScrapeActivities, ScrapeWorkflowResult } from '@wds/workflows/scrape';
import { asActivity } from '../failures';
import { hideUrlFromLogs } from '../log-privacy';
import { finishScrapePage } from '../scrape/finish';

/** Firecrawl's published price: audio or video extraction, +4 credits per page (per format delivered here). */
export const MEDIA_CREDITS = 4;
/** The spec: audio and video links expire after 1 hour. */
export const MEDIA_URL_TTL_SECONDS = 3600;

export interface MediaActivityDeps {
  db: Db;
  files: FileStore;
  tools: MediaTools;
  /** The process's guarded proxy for yt-dlp, started on first use. */
  proxy: () => Promise<GuardedProxy>;
  allowPrivateNetwork: boolean;
  /** WDS_MEDIA_MAX_BYTES */
  maxBytes: number;
  /** Link lifetime: the spec's hour, or WDS_FILE_URL_TTL_SECONDS when that is shorter. */
  urlTtlSeconds: number;
  llmAvailable?: boolean;
}

type Draft = ScrapeDocument & MediaDraft;

export function createMediaActivities(deps: MediaActivityDeps): MediaScrapeActivities {
  return {
    extractScrapeMedia: (input) => {
      const ctx = Context.current();
      // Downloads and ffmpeg take seconds: heartbeats let Temporal retry a dead worker's step soon.
      const beat = setInterval(() => ctx.heartbeat(), 1_000);
      return asActivity(() => mediaStep(deps, input, ctx.cancellationSignal)).finally(() => clearInterval(beat));
    },
  };
}

/**
 * The media step of one scrape: the draft's media candidates → files (`@wds/media`: guarded
 * downloads, ffprobe, ffmpeg; yt-dlp behind the guarded proxy) → the file store under the job's
 * keys → links in the document, +4 credits per format made. Then the job is completed, or handed
 * to the LLM step. A retry redoes the work (keys are the job's, so files are overwritten).
 */
async function mediaStep(deps: MediaActivityDeps, { jobId, deadlineMs }: ExtractScrapeMediaInput, signal: AbortSignal): Promise<ScrapeWorkflowResult> {
  const job = await loadScrapeJob(deps.db, jobId);
  if (!job) throw new WdsError('NOT_FOUND', { message: `Scrape job ${jobId} not found` });
  const doc = job.document as Draft | null;
  if (job.status === 'completed') return { jobId, statusCode: (doc as ScrapeDocument).metadata.statusCode };
  if (!doc) throw new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', message: 'Internal Server Error: the media step found no page for this scrape' });
  const o = job.options as ScrapeOptions & { url: string };
  const want = mediaWork(o);
  // A retry after this step stored its result for the LLM step: nothing to redo.
  if (!doc.mediaSources && want.every((k) => k in doc)) return { jobId, statusCode: doc.metadata.statusCode, needsLlm: true };

  const shown = hideUrlFromLogs(o);
  let credits = job.creditsUsed;
  try {
    const warnings: string[] = [];
    if (o.lockdown) {
      // Lockdown makes no outbound request, and media are not in the cache.
      for (const k of want) doc[k] = null;
      warnings.push(`${want.join(' and ')}: not extracted: lockdown makes no outbound request, and the cache holds no media.`);
    } else {
      const made = await extract(deps, jobId, o, doc, want, deadlineMs, signal);
      credits += MEDIA_CREDITS * made.count;
      warnings.push(...made.warnings);
    }
    for (const w of warnings) doc.warning = doc.warning ? `${doc.warning} ${w}` : w;
    delete doc.mediaSources;
    doc.metadata.creditsUsed = credits;
    return { jobId, statusCode: doc.metadata.statusCode, ...(await finishScrapePage(deps.db, jobId, o, doc, credits, deps.llmAvailable, undefined, 'media')) };
  } finally {
    shown();
  }
}

async function extract(deps: MediaActivityDeps, jobId: string, o: ScrapeOptions & { url: string }, doc: Draft, want: MediaFormatType[], deadlineMs: number, signal: AbortSignal) {
  const workDir = await mkdtemp(join(tmpdir(), 'wds-media-'));
  try {
    const r = await extractMedia({
      pageUrl: doc.metadata.url ?? o.url,
      sources: doc.mediaSources ?? { video: [], audio: [] },
      want,
      workDir,
      tools: deps.tools,
      allowPrivateNetwork: deps.allowPrivateNetwork,
      skipTlsVerification: o.skipTlsVerification,
      maxBytes: deps.maxBytes,
      deadlineMs,
      signal,
      proxy: deps.proxy,
    });
    let count = 0;
    for (const k of want) {
      const f = r.files[k];
      if (!f) {
        doc[k] = null;
        continue;
      }
      const key = scrapeFileKey(jobId, k, f.contentType);
      await deps.files.putFile(key, f.file);
      doc[k] = await deps.files.signedUrl(key, deps.urlTtlSeconds);
      count++;
    }
    return { count, warnings: r.warnings };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
