import type { ChangeTracking } from '@wds/contracts';
import { crawlUrlKey } from '@wds/crawl';
import { pageContents, pageHistories, recordPageVersions, storableText, type Db, type PageHistory, type PageVersion, type VersionWrite } from '@wds/db';
import { decide, previousScrapeAt, type Decision, type Observation } from './compare';
import { gitDiff } from './diff';
import { jsonChanges } from './json-diff';
import { hashText, jsonModeKey, normalizeMarkdown } from './normalize';

/**
 * Change tracking of a batch of pages: read their histories (one query), decide each page
 * (compare.ts), build the diff and the json-mode answer, and the write that records the
 * observation. `prepareTracking` writes nothing, so a caller can put the writes into the
 * statement that stores its pages (pageVersionCtes); `trackPages` also records them.
 */

export type ChangeMode = 'git-diff' | 'json';

export interface TrackOptions {
  teamId: string;
  /** The request's `tag`: each tag is its own history. */
  tag?: string | null;
  modes?: readonly ChangeMode[];
  /** Keep the markdown (and json values) of new versions; false (zero data retention) keeps hashes only. */
  keepContent: boolean;
  /** json mode: the model extraction (the caller's LLM step), the schema and prompt it runs with. */
  json?: { schema?: Record<string, unknown>; prompt?: string; extract(markdown: string): Promise<unknown> };
}

interface ObservedPage {
  /** The URL as requested (the page's identity is its URL key: packages/crawl crawlUrlKey). */
  url: string;
  /** Unique per observation and page (`scrape:<id>`, `page:<job>:<url key>`, `monitor:<check>:<url key>`): retries record once. */
  sourceKey: string;
  /** hidden: a crawl reached the page only from memory of earlier crawls. */
  visibility?: 'visible' | 'hidden';
  bodyHash?: string | null;
  etag?: string | null;
  lastModified?: string | null;
}

export type PageObservation =
  | (ObservedPage & { kind: 'page'; statusCode: number; markdown: string; title?: string })
  /** Proved unchanged before conversion: a 304, or sameBody() (conditional.ts). */
  | (ObservedPage & { kind: 'unchanged'; statusCode: number })
  /** The fetch failed (timeout, network error): nothing to compare. */
  | (ObservedPage & { kind: 'failed'; statusCode?: number; error: string });

export interface PageTracking {
  url: string;
  urlKey: string;
  outcome: 'new' | 'same' | 'changed' | 'removed' | 'failed';
  /** The format's answer; null when nothing was compared (a failed fetch: see `failure`). */
  changeTracking: ChangeTracking | null;
  failure?: string;
  warnings: string[];
  /** json mode: model extractions this page ran (its credits). */
  modelCalls: number;
  /** The write recording this observation (null: nothing to record, e.g. a first fetch that failed). */
  write: VersionWrite | null;
}

/**
 * A page's identity in page_versions: the crawl frontier's URL key; a very long one keeps its
 * start (the site, for knownSitePages) and a hash of the whole, as btree keys are limited to ~2.7 kB.
 */
export function pageKeyOf(url: string): string {
  const k = crawlUrlKey(url);
  return k.length <= 1_024 ? k : `${k.slice(0, 900)}#sha256:${hashText(k)}`;
}

/** The site part of a URL key (host without www., port): page_versions.site. */
export const siteOfKey = (urlKey: string) => urlKey.slice(0, urlKey.indexOf('/') >= 0 ? urlKey.indexOf('/') : urlKey.length);

/** Decides every page and builds its answer and its write; writes nothing. */
export async function prepareTracking(db: Db, o: TrackOptions, pages: PageObservation[]): Promise<PageTracking[]> {
  const tag = o.tag ?? '';
  const keyed = pages.map((p) => ({ p, urlKey: pageKeyOf(p.url) }));
  const histories = await pageHistories(db, { teamId: o.teamId, tag, pages: keyed.map((k) => ({ urlKey: k.urlKey, sourceKey: k.p.sourceKey })) });
  const texts = keyed.map(({ p }) => (p.kind === 'page' ? storableText(normalizeMarkdown(p.markdown)) : null));
  const decisions = keyed.map(({ p, urlKey }, i) => decide(histories.get(urlKey)?.baseline ?? null, observationOf(p, texts[i])));
  // Previous markdowns are read only for pages that changed and need them (a diff, a json re-extraction).
  const needed = keyed.flatMap(({ urlKey }, i) => {
    const b = histories.get(urlKey)?.baseline;
    return decisions[i]!.outcome === 'changed' && b?.contentHash && needsPrevious(o, b) ? [b.contentHash] : [];
  });
  const previous = await pageContents(db, o.teamId, needed);
  return Promise.all(keyed.map(({ p, urlKey }, i) => finish(o, tag, p, urlKey, texts[i] ?? null, histories.get(urlKey), decisions[i]!, previous)));
}

/** prepareTracking, then the writes in one statement. */
export async function trackPages(db: Db, o: TrackOptions, pages: PageObservation[]): Promise<PageTracking[]> {
  const out = await prepareTracking(db, o, pages);
  await recordPageVersions(db, out.flatMap((t) => (t.write ? [t.write] : [])));
  return out;
}

function observationOf(p: PageObservation, text: string | null): Observation {
  if (p.kind === 'failed') return { kind: 'failed', statusCode: p.statusCode, error: p.error };
  if (p.kind === 'unchanged') return { kind: 'unchanged', statusCode: p.statusCode };
  return { kind: 'page', statusCode: p.statusCode, markdown: text!, markdownHash: hashText(text!), empty: !text, title: p.title };
}

const wants = (o: TrackOptions, m: ChangeMode) => !!o.modes?.includes(m);
const needsPrevious = (o: TrackOptions, b: PageVersion) => wants(o, 'git-diff') || (wants(o, 'json') && !!o.json && b.jsonKey !== jsonModeKey(o.json.schema, o.json.prompt));

/** One page's inputs to its answer. */
interface PageCtx {
  o: TrackOptions;
  tag: string;
  p: PageObservation;
  urlKey: string;
  /** The normalized markdown (page observations). */
  text: string | null;
  h: PageHistory | undefined;
  /** The previous version's kept markdown, when it was needed and is kept. */
  prevText: string | undefined;
}

const validatorsOf = (p: PageObservation) => ({ bodyHash: p.bodyHash ?? null, etag: p.etag ?? null, lastModified: p.lastModified ?? null });
const statusCodeOf = (p: PageObservation) => (p.kind === 'failed' ? (p.statusCode ?? null) : p.statusCode);

async function finish(o: TrackOptions, tag: string, p: PageObservation, urlKey: string, text: string | null, h: PageHistory | undefined, d: Decision, previous: Map<string, string>): Promise<PageTracking> {
  const b = h?.baseline ?? null;
  const c: PageCtx = { o, tag, p, urlKey, text, h, prevText: b?.contentHash ? previous.get(b.contentHash) : undefined };
  const out = { url: p.url, urlKey, warnings: [] as string[], modelCalls: 0 };
  if (d.outcome === 'failed') {
    const write: VersionWrite | null = d.write === 'failed' && b ? { kind: 'failed', teamId: o.teamId, versionId: b.id, sourceKey: p.sourceKey, error: d.reason } : null;
    return { ...out, outcome: 'failed', changeTracking: null, failure: d.reason, write };
  }
  const ct: ChangeTracking = { previousScrapeAt: previousScrapeAt(h, p.sourceKey)?.toISOString() ?? null, changeStatus: d.outcome, visibility: p.visibility ?? 'visible' };
  if (d.write === 'seen') return { ...out, outcome: 'same', changeTracking: ct, write: seenWrite(c, d.checkStatus) };
  if (d.outcome === 'changed' && wants(o, 'git-diff')) {
    if (c.prevText === undefined) out.warnings.push('changeTracking: the previous version\'s text is not kept (zero data retention or pruned), so there is no diff.');
    else {
      const diff = gitDiff(c.prevText, text!);
      // Cannot happen (the hashes differ over the same normalized text); never report a change without one.
      if (!diff) return { ...out, outcome: 'same', changeTracking: { ...ct, changeStatus: 'same' }, write: seenWrite(c, 'ok') };
      ct.diff = diff;
    }
  }
  const json = d.status === 'ok' ? await jsonMode(c, d.outcome === 'changed', ct, out) : { value: null, key: null };
  const write: VersionWrite = {
    kind: 'version', teamId: o.teamId, urlKey, site: siteOfKey(urlKey), tag, url: o.keepContent ? p.url : null, sourceKey: p.sourceKey,
    status: d.status, statusCode: statusCodeOf(p), markdownHash: d.status === 'ok' ? hashText(text!) : null, markdown: d.status === 'ok' && o.keepContent ? text : null,
    ...validatorsOf(p), json: o.keepContent ? json.value : null, jsonKey: o.keepContent ? json.key : null,
  };
  return { ...out, outcome: d.outcome, changeTracking: ct, write };
}

function seenWrite(c: PageCtx, checkStatus: 'ok' | 'removed'): VersionWrite {
  return { kind: 'seen', teamId: c.o.teamId, versionId: c.h!.baseline!.id, sourceKey: c.p.sourceKey, checkStatus, statusCode: statusCodeOf(c.p), ...validatorsOf(c.p) };
}

/**
 * json mode on a new or changed page: the model reads the current markdown; for a change, the
 * previous values are the stored ones when extracted with the same schema and prompt, else the
 * model reads the previous markdown too. Sets `ct.json` on a change; returns what to store.
 */
async function jsonMode(c: PageCtx, changed: boolean, ct: ChangeTracking, out: { warnings: string[]; modelCalls: number }): Promise<{ value: unknown; key: string | null }> {
  const j = c.o.json;
  if (!wants(c.o, 'json') || !j) return { value: null, key: null };
  const key = jsonModeKey(j.schema, j.prompt);
  const value = await j.extract(c.text!);
  out.modelCalls++;
  if (changed) {
    const b = c.h?.baseline;
    let before: unknown = b?.jsonKey === key ? b.json : undefined;
    if (before === undefined && c.prevText !== undefined) {
      before = await j.extract(c.prevText);
      out.modelCalls++;
    }
    if (before === undefined) out.warnings.push('changeTracking: the previous version\'s values are not kept (zero data retention or pruned), so previous values are null.');
    ct.json = jsonChanges(before ?? null, value, j.schema).json;
  }
  return { value, key };
}
