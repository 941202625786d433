import { changeTrackingOf, type ScrapeDocument, type ScrapeOptions } from '@wds/contracts';
import type { VersionWrite } from '@wds/db';
import { addUsage, extractJson, LLM_CREDITS, type CallOptions, type LlmClient } from '@wds/llm';
import type { TrackedDocument } from '../changes/track-document';
import { runPageFormats, withLlmFields, type PageLlmResult } from './page-formats';

/** Records the page's change tracking (the caller knows its team and observation key), with json mode's extraction. */
export type TrackPage = (document: ScrapeDocument, extract: (markdown: string) => Promise<unknown>) => Promise<TrackedDocument>;

export interface TrackedPageResult extends PageLlmResult {
  /** The page's final document: model-made fields merged, `changeTracking` answered. */
  document: ScrapeDocument;
  /** The version writes, for the statement that stores the page. */
  writes: VersionWrite[];
}

/**
 * A page's model step, then its change tracking over the final markdown (after onlyCleanContent
 * or a redaction pass changed it): json mode's extractions run here, inside the same step, its
 * deadline, token budget and metrics. Credits: the formats', plus json mode's when the model ran.
 */
export async function runTrackedPageFormats(
  client: LlmClient,
  o: Pick<ScrapeOptions, 'formats' | 'onlyCleanContent' | 'redactPII'>,
  draft: ScrapeDocument,
  call: CallOptions,
  track: TrackPage,
): Promise<TrackedPageResult> {
  const r = await runPageFormats(client, o, draft, call);
  const document = withLlmFields(draft, r, o);
  const ct = changeTrackingOf(o);
  if (!ct) return { ...r, document, writes: [] };
  const url = document.metadata.sourceURL;
  const warnings: string[] = [];
  const extract = async (markdown: string) => {
    const x = await extractJson(client, { page: { markdown, url }, schema: ct.schema, prompt: ct.prompt, ...call });
    r.usage = addUsage(r.usage, x.usage);
    if (x.warning) warnings.push(x.warning);
    return x.data;
  };
  const t = await track(document, extract);
  const warning = [t.document.warning, ...warnings].filter(Boolean).join(' ');
  return {
    ...r,
    credits: r.credits + (t.modelCalls ? LLM_CREDITS.CHANGE_TRACKING_JSON : 0),
    document: warning ? { ...t.document, warning } : t.document,
    writes: t.writes,
  };
}
