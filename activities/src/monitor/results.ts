import { jsonFieldChanges, type PageTracking } from '@wds/changes';
import type { CheckPageResult, CheckPageStatus } from '@wds/db';
import type { Observed } from './observe';

/**
 * A check page's result from what its observation and the change-tracking engine decided — the
 * one place the API's page fields (status, scrape ids, diff, snapshot, metadata, credits) are
 * made, for fetch batches, the model step and crawl targets' collection alike.
 */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** The observation id a version's source key carries (check pages and scrapes are named by uuid). */
export const idOf = (sourceKey: string | null | undefined) => (sourceKey ? (UUID.exec(sourceKey)?.[0] ?? null) : null);

export interface PageRef {
  checkId: string;
  targetId: string;
  urlKey: string;
  /** The check page's id: its observation's source key and its currentScrapeId when it brought a new version. */
  pageId: string;
}

export interface ResultParts {
  status: CheckPageStatus;
  statusCode: number | null;
  error?: string | null;
  previous: string | null;
  current: string | null;
  metadata?: Record<string, unknown>;
  diff?: unknown;
  snapshot?: unknown;
  judgment?: unknown;
  /** Credits of the page (≥ 1 unless it failed). */
  credits: number;
}

export function resultOf(p: PageRef, r: ResultParts): CheckPageResult {
  return {
    checkId: p.checkId, targetId: p.targetId, urlKey: p.urlKey, status: r.status, statusCode: r.statusCode, error: r.error ?? null,
    previousScrapeId: r.previous, currentScrapeId: r.current, metadata: { ...(r.metadata ?? {}), creditsUsed: r.credits },
    diff: r.diff ?? null, snapshot: r.snapshot ?? null, judgment: r.judgment ?? null, credits: r.credits,
  };
}

/** What a page's observation says besides its status: its title, and `visibility: hidden` for a crawl target's page reached from memory. */
export function pageMetadata(o: Pick<Observed, 'title'>, hidden: boolean): Record<string, unknown> {
  return { ...(o.title ? { title: o.title } : {}), ...(hidden ? { visibility: 'hidden' } : {}) };
}

export interface Compared {
  status: CheckPageStatus;
  diff: Record<string, unknown> | null;
  snapshot: { json: unknown } | null;
  /** json mode's changed fields (for the judge). */
  fields: Record<string, { previous: unknown; current: unknown }> | null;
}

/**
 * What a tracked page reports. git-diff: `diff.text` and the parseDiff AST as `diff.json`. json
 * mode: `diff.json` is the changed fields by path, `snapshot.json` the extraction; a page whose
 * markdown changed but none of whose fields did is `same` unless git-diff is asked for too (mixed
 * mode: `changed` when either changed, `diff.text` beside the field diff).
 */
export function comparedOf(t: PageTracking, modes: readonly string[], baselineJson: unknown): Compared {
  const status = (t.outcome === 'failed' ? 'error' : t.outcome) as CheckPageStatus;
  const ct = t.changeTracking;
  const jsonPairs = ct?.json as Record<string, { previous: unknown; current: unknown }> | null | undefined;
  // The extraction: a changed page's pairs, a new page's version (what was recorded), else the version compared with.
  const recorded = t.write?.kind === 'version' ? t.write.json : undefined;
  const current = jsonPairs ? Object.fromEntries(Object.entries(jsonPairs).map(([k, v]) => [k, v.current])) : undefined;
  const snapshot = modes.includes('json') ? { json: current ?? recorded ?? baselineJson ?? null } : null;
  if (status !== 'changed') return { status, diff: null, snapshot, fields: null };
  const text = ct?.diff as { text?: string; json?: unknown } | string | undefined;
  const gitDiff = modes.includes('git-diff') && text ? (typeof text === 'string' ? { text } : text) : null;
  if (!modes.includes('json')) return { status, diff: gitDiff, snapshot, fields: null };
  const previous = jsonPairs ? Object.fromEntries(Object.entries(jsonPairs).map(([k, v]) => [k, v.previous])) : null;
  const fields = jsonFieldChanges(previous, current ?? null);
  const fieldsChanged = Object.keys(fields).length > 0;
  if (!fieldsChanged && !gitDiff) return { status: 'same', diff: null, snapshot, fields: null };
  return { status, diff: { ...(gitDiff?.text !== undefined ? { text: gitDiff.text } : {}), json: fields }, snapshot, fields: fieldsChanged ? fields : null };
}
