import { prepareTracking, type PageObservation } from '@wds/changes';
import { changeTrackingOf, type ScrapeDocument, type ScrapeOptions } from '@wds/contracts';
import { boundedKey, type Db, type VersionWrite } from '@wds/db';

/**
 * The `changeTracking` format on one page, at the step that completes it (the fetch, or the model
 * step when the request has model work): compare with the team's last version (packages/changes)
 * and return the document with `changeTracking` — or, when the fetch failed (5xx, block page),
 * without it and with a `warning` — plus the write that records the version. The caller puts the
 * write into the statement that stores the page, so both commit together.
 */
export interface TrackDocumentInput {
  teamId: string;
  /** The observation's key: `scrape:<id>`, `page:<job>:<url key>`. */
  sourceKey: string;
  options: Pick<ScrapeOptions, 'formats' | 'zeroDataRetention' | 'lockdown'>;
  /** Zero data retention of the job itself (crawl/batch): hashes only, like the option. */
  keepsNoData?: boolean;
  document: ScrapeDocument;
  visibility?: 'visible' | 'hidden';
  /** The fetch's body hash and validators (HTTP engine), stored for conditional requests and the same-body check. */
  fetched?: FetchValidators;
  /** json mode: the model extraction (see ../llm/tracked-formats.ts). */
  extract?: (markdown: string) => Promise<unknown>;
}

export interface FetchValidators {
  bodyHash: string | null;
  etag: string | null;
  lastModified: string | null;
}

export interface TrackedDocument {
  document: ScrapeDocument;
  writes: VersionWrite[];
  /** json mode: model extractions run for this page. */
  modelCalls: number;
}

export async function trackDocument(db: Db, input: TrackDocumentInput): Promise<TrackedDocument> {
  const ct = changeTrackingOf(input.options);
  if (!ct) return { document: input.document, writes: [], modelCalls: 0 };
  const doc = input.document;
  const title = Array.isArray(doc.metadata.title) ? doc.metadata.title[0] : doc.metadata.title;
  const observation: PageObservation = {
    kind: 'page',
    url: doc.metadata.sourceURL,
    sourceKey: input.sourceKey,
    statusCode: doc.metadata.statusCode,
    markdown: doc.markdown ?? '',
    title,
    visibility: input.visibility,
    ...input.fetched,
  };
  const json = ct.modes?.includes('json') && input.extract ? { schema: ct.schema, prompt: ct.prompt, extract: input.extract } : undefined;
  const keepContent = !(input.keepsNoData || input.options.zeroDataRetention || input.options.lockdown);
  const [t] = await prepareTracking(db, { teamId: input.teamId, tag: ct.tag, modes: ct.modes ?? [], keepContent, json }, [observation]);
  const warnings = [...t!.warnings];
  if (t!.failure) warnings.unshift(`changeTracking: nothing was compared because ${t!.failure}; the last good version stays the one compared with.`);
  const out: ScrapeDocument = t!.changeTracking ? { ...doc, changeTracking: t!.changeTracking } : { ...doc };
  const warning = [doc.warning, ...warnings].filter(Boolean).join(' ');
  if (warning) out.warning = warning;
  return { document: out, writes: t!.write ? [t!.write] : [], modelCalls: t!.modelCalls };
}

/** The crawl/batch page's side: its observation is the page of this job (`page:<job>:<url key>`, bounded). */
export function trackCrawlPage(
  db: Db,
  job: { id: string; teamId: string; zeroDataRetention: boolean; scrape: TrackDocumentInput['options'] },
  page: { key: string; hidden: boolean },
  document: ScrapeDocument,
  extra: Pick<TrackDocumentInput, 'fetched' | 'extract'> = {},
): Promise<TrackedDocument> {
  return trackDocument(db, {
    teamId: job.teamId,
    sourceKey: boundedKey('page', job.id, page.key),
    options: job.scrape,
    keepsNoData: job.zeroDataRetention,
    document,
    visibility: page.hidden ? 'hidden' : 'visible',
    ...extra,
  });
}
