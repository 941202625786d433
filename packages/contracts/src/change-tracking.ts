import type { ChangeTrackingFormat } from './formats';
import type { ScrapeOptions } from './scrape';

/**
 * The `changeTracking` format's request-side rules (Firecrawl's docs): it compares markdown, so
 * `markdown` must be requested too; json mode extracts with a schema; it never reads the cache;
 * a scrape with `waitFor` waits at least 5 s. The comparison itself is packages/changes.
 */

export const CHANGE_TRACKING_MIN_WAIT_MS = 5_000;

export const changeTrackingOf = (o: Pick<ScrapeOptions, 'formats'>): ChangeTrackingFormat | undefined =>
  o.formats.find((f) => f.type === 'changeTracking') as ChangeTrackingFormat | undefined;

/** json mode: a model extraction per new or changed page (the LLM step). */
export const changeTrackingJson = (o: Pick<ScrapeOptions, 'formats'>): boolean => !!changeTrackingOf(o)?.modes?.includes('json');

/** The wait before fetching: `waitFor`, at least 5 s when change tracking is asked for and the request waits at all. */
export function effectiveWaitFor(o: Pick<ScrapeOptions, 'formats' | 'waitFor'>): number {
  return o.waitFor > 0 && changeTrackingOf(o) ? Math.max(o.waitFor, CHANGE_TRACKING_MIN_WAIT_MS) : o.waitFor;
}

export interface RequestIssue {
  code: string;
  path: (string | number)[];
  message: string;
}

/** What is wrong with a request's changeTracking entry (400 details); empty when fine or absent. */
export function changeTrackingIssues(o: Pick<ScrapeOptions, 'formats' | 'lockdown' | 'minAge'>): RequestIssue[] {
  const at = o.formats.findIndex((f) => f.type === 'changeTracking');
  if (at < 0) return [];
  const out: RequestIssue[] = [];
  const f = o.formats[at] as ChangeTrackingFormat;
  if (o.formats.filter((x) => x.type === 'changeTracking').length > 1) out.push({ code: 'duplicate_format', path: ['formats', at], message: "formats may hold one 'changeTracking' entry" });
  if (!o.formats.some((x) => x.type === 'markdown')) {
    out.push({ code: 'missing_format', path: ['formats'], message: "The changeTracking format requires the markdown format: add 'markdown' to formats (change tracking compares the page's markdown)" });
  }
  if (f.modes?.includes('json') && f.schema === undefined && f.prompt === undefined) {
    out.push({ code: 'invalid_format', path: ['formats', at, 'schema'], message: "changeTracking json mode requires a 'schema' (or a 'prompt')" });
  }
  if (o.lockdown || o.minAge !== undefined) {
    out.push({ code: 'unsupported', path: ['formats', at], message: `changeTracking never reads the cache, so it cannot be combined with ${o.lockdown ? 'lockdown' : 'minAge'}` });
  }
  return out;
}
