import { Context } from '@temporalio/activity';
import { prepareTracking, type PageObservation, type PageTracking } from '@wds/changes';
import {
  claimCheckPages, endFinishedChecks, historyKey, holdForModel, monitorsById, pageHistoriesOf, storeCheckPageResults,
  type CheckPageResult, type Db, type HeldPage, type LeasedCheckPage, type PageHistory, type VersionWrite,
} from '@wds/db';
import { monitorPagesChecked } from '@wds/metrics';
import type { ProcessBatchInput, ProcessBatchResult } from '@wds/workflows/crawl';
import type { PageDeps } from '../scrape/pipeline';
import { announceCheckPages, announceEndedChecks } from './events';
import { observePage, type Observed } from './observe';
import { comparedOf, idOf, pageMetadata, resultOf } from './results';
import { needsModel, targetSetup, type TargetSetup } from './setup';

const HEARTBEAT_MS = 1_000;
/** Long enough that a slow page never loses its lease mid-fetch (a page's timeout is at most 5 minutes). */
const LEASE_MS = 6 * 60_000;

export interface MonitorPageDeps extends PageDeps {
  /** An LLM is configured: pages whose changes need the model (json mode, the goal judge) wait for the run's LLM window. */
  llmAvailable: boolean;
}

/** What a page held for the model step carries (`pending`): its observation and what the fetch cost. */
export interface PendingModelWork {
  observation: PageObservation;
  /** The page's own credits still to charge (a fetched page's; 0 for a crawled page, which its crawl billed). */
  credits: number;
  title?: string;
  /** A search result to judge: what the search said of it. */
  search?: SearchPending;
}

export interface SearchPending {
  title?: string;
  description?: string;
  query?: string;
  /** The result was seen before, but judged under another goal: judged again, its version's verdict updated. */
  seenVersionId?: number;
}

/**
 * One batch of a monitor run (wds-fetch): lease up to `batchSize` check pages, read the
 * histories they compare with in one query, fetch them `concurrency` at a time (cheap paths
 * first: observe.ts), decide the few whose bytes changed through the change-tracking engine,
 * then store every result, its version write and the end of every check whose pages are all in,
 * in two statements. Unchanged pages cost a fetch, a hash and their share of those statements.
 * Pages whose changes need the model (json mode, the goal judge; search results to judge) are
 * handed to the run's LLM window instead (./model.ts).
 */
export async function checkMonitorPages(deps: MonitorPageDeps, input: ProcessBatchInput): Promise<ProcessBatchResult> {
  const ctx = Context.current();
  const owner = `${ctx.info.workflowExecution?.runId ?? ctx.info.workflowType}:${ctx.info.activityId}`;
  const pages = await claimCheckPages(deps.db, input.jobId, owner, input.batchSize, LEASE_MS, { retakeOwn: ctx.info.attempt > 1 });
  if (!pages.length) return { claimed: 0, succeeded: 0, failed: 0, stopped: false };
  const monitors = await monitorsById(deps.db, [...new Set(pages.map((p) => p.monitorId))]);
  const setups = pages.map((p) => targetSetup(monitors.get(p.monitorId), p.monitorId, p.targetId));
  const compared = pages.flatMap((p, i) => (p.kind === 'search' ? [] : [{ teamId: p.teamId, tag: setups[i]!.tag, urlKey: p.urlKey, sourceKey: p.pageId }]));
  const histories = await pageHistoriesOf(deps.db, compared);
  const baselineOf = (i: number) => (pages[i]!.kind === 'search' ? null : (histories.get(keyOf(pages[i]!, setups[i]!)) ?? null));

  const abort = new AbortController();
  ctx.cancellationSignal.addEventListener('abort', () => abort.abort());
  let done = 0;
  const beat = setInterval(() => ctx.heartbeat({ done }), HEARTBEAT_MS);
  let observed: Observed[];
  try {
    observed = await mapLimit(pages, Math.max(1, input.concurrency), async (p, i) => {
      const r = await observePage(deps, { url: p.url, pageId: p.pageId, options: setups[i]!.options, baseline: baselineOf(i)?.baseline ?? null, signal: abort.signal, hidden: p.kind === 'hidden' });
      done++;
      return r;
    });
  } finally {
    clearInterval(beat);
  }
  if (abort.signal.aborted) return { claimed: pages.length, succeeded: 0, failed: 0, stopped: true };

  const d = await decideAll(deps, pages, setups, observed, baselineOf);
  await storeCheckPageResults(deps.db, d.results.map((r) => r.result), d.results.flatMap((r) => (r.write ? [r.write] : [])));
  await holdForModel(deps.db, d.held);
  for (const r of d.results) monitorPagesChecked.inc({ status: r.result.status, path: r.path });
  const stored = new Set(d.results.map((r) => `${r.result.checkId}|${r.result.targetId}|${r.result.urlKey}`));
  const storedPages = pages.filter((p) => stored.has(`${p.checkId}|${p.targetId}|${p.urlKey}`));
  await announceCheckPages(deps.db, storedPages, monitors);
  const ended = await endFinishedChecks(deps.db, [...new Set(pages.map((p) => p.checkId))]);
  await announceEndedChecks(deps.db, ended, monitors);
  const failed = d.results.filter((r) => r.result.status === 'error').length;
  return { claimed: pages.length, succeeded: pages.length - failed, failed, stopped: false, ...(d.held.length ? { llmQueued: d.held.length } : {}) };
}

const keyOf = (p: { teamId: string; urlKey: string }, s: TargetSetup) => historyKey(p.teamId, s.tag, p.urlKey);

interface Decided {
  result: CheckPageResult;
  write: VersionWrite | null;
  path: Observed['path'];
}

/**
 * Unchanged pages are decided here (a sighting of the version they matched); the rest go
 * through the change-tracking engine, grouped by history (team, tag and modes), which compares
 * the markdown, builds the diff and the version write. A page whose change needs the model, and
 * every search result fetched for the judge, is held for the model step instead.
 */
async function decideAll(
  deps: MonitorPageDeps, pages: LeasedCheckPage[], setups: TargetSetup[], observed: Observed[], historyOf: (i: number) => PageHistory | null,
): Promise<{ results: Decided[]; held: HeldPage[] }> {
  const results: Decided[] = [];
  const held: HeldPage[] = [];
  const groups = new Map<string, number[]>();
  pages.forEach((p, i) => {
    const o = observed[i]!;
    const s = setups[i]!;
    if (p.kind === 'search') {
      const r = searchFetched(p, o);
      if ('hold' in r) held.push({ checkId: p.checkId, targetId: p.targetId, urlKey: p.urlKey, pending: r.hold });
      else results.push(r);
      return;
    }
    const baseline = historyOf(i)?.baseline;
    if (o.observation.kind === 'unchanged' && baseline?.status === 'ok') {
      const ob = o.observation;
      results.push({
        path: o.path,
        result: resultOf(p, { status: 'same', statusCode: ob.statusCode, previous: idOf(baseline.sourceKey), current: idOf(baseline.sourceKey), metadata: pageMetadata(o, p.kind === 'hidden'), snapshot: s.json ? { json: baseline.json ?? null } : null, credits: Math.max(1, o.credits) }),
        write: { kind: 'seen', teamId: p.teamId, versionId: baseline.id, sourceKey: p.pageId, checkStatus: 'ok', statusCode: ob.statusCode === 304 ? null : ob.statusCode, bodyHash: ob.bodyHash ?? null, etag: ob.etag ?? null, lastModified: ob.lastModified ?? null },
      });
      return;
    }
    const g = `${p.teamId}|${s.tag}|${s.keepContent}|${s.modes.join(',')}`;
    groups.set(g, [...(groups.get(g) ?? []), i]);
  });
  for (const idx of groups.values()) {
    const s = setups[idx[0]!]!;
    // The markdown decides here; json mode's extraction waits for the model step (so does the judge).
    const modes = s.modes.filter((m) => m !== 'json');
    const tracked = await prepareTracking(deps.db, { teamId: pages[idx[0]!]!.teamId, tag: s.tag, modes, keepContent: s.keepContent }, idx.map((i) => observed[i]!.observation as PageObservation));
    idx.forEach((i, j) => {
      const t = tracked[j]!;
      const p = pages[i]!;
      if (needsModel(s, t.outcome, deps.llmAvailable)) {
        const o = observed[i]!;
        const work: PendingModelWork = { observation: o.observation, credits: Math.max(1, o.credits), ...(o.title ? { title: o.title } : {}) };
        held.push({ checkId: p.checkId, targetId: p.targetId, urlKey: p.urlKey, pending: work });
        return;
      }
      results.push(fromTracking(p, observed[i]!, t, s, historyOf(i)));
    });
  }
  return { results, held };
}

/** A tracked page's result (here, in the model step and in a crawl target's collection). */
export function fromTracking(p: LeasedCheckPage | (Pick<LeasedCheckPage, 'checkId' | 'targetId' | 'urlKey' | 'pageId'> & { kind: LeasedCheckPage['kind'] }), o: Pick<Observed, 'observation' | 'title' | 'credits' | 'path'>, t: PageTracking, s: TargetSetup, h: PageHistory | null, extra: { judgment?: unknown; modelCredits?: number; baseCredits?: number } = {}): Decided {
  const statusCode = 'statusCode' in o.observation ? (o.observation.statusCode ?? null) : null;
  const baselineSource = h?.baseline?.sourceKey ?? null;
  const metadata = pageMetadata(o, p.kind === 'hidden');
  if (t.outcome === 'failed') {
    return { path: 'failed', result: resultOf(p, { status: 'error', statusCode, error: t.failure ?? 'the page could not be fetched', previous: idOf(baselineSource), current: null, metadata, credits: 0 }), write: t.write };
  }
  const c = comparedOf(t, s.modes, h?.baseline?.json);
  const current = t.outcome === 'same' ? idOf(baselineSource) : p.pageId;
  const credits = (extra.baseCredits ?? Math.max(1, o.credits)) + (extra.modelCredits ?? 0);
  return { path: o.path, result: resultOf(p, { status: c.status, statusCode, previous: idOf(baselineSource), current, metadata, diff: c.diff, snapshot: c.snapshot, judgment: extra.judgment, credits }), write: t.write };
}

/** A search result fetched for the judge: held for the model step, or an error (nothing to judge: `skipped`). */
function searchFetched(p: LeasedCheckPage, o: Observed): Decided | { hold: PendingModelWork } {
  const search = (p.pending as { search?: SearchPending } | null)?.search ?? {};
  const info = { ...(search.title ? { title: search.title } : {}), ...(search.description ? { description: search.description } : {}), ...(search.query ? { query: search.query } : {}) };
  if (o.observation.kind === 'page') return { hold: { observation: o.observation, credits: 0, ...(o.title ? { title: o.title } : {}), search } };
  const statusCode = 'statusCode' in o.observation ? (o.observation.statusCode ?? null) : null;
  const error = o.observation.kind === 'failed' ? o.observation.error : 'the result could not be read';
  return { path: 'failed', write: null, result: resultOf(p, { status: 'error', statusCode, error: `The result could not be judged: ${error}`, previous: null, current: null, metadata: { ...info, searchStatus: 'skipped' }, credits: 0 }) };
}

/** `f` over `items`, at most `limit` at once, results in order. */
async function mapLimit<T, R>(items: T[], limit: number, f: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]!, i);
    }
  }));
  return out;
}
