import { Context } from '@temporalio/activity';
import { prepareTracking, type PageObservation, type PageTracking } from '@wds/changes';
import { scrapeOptionsSchema, type ScrapeOptions } from '@wds/contracts';
import {
  claimCheckPages, endFinishedChecks, historyKey, monitorsById, pageHistoriesOf, storeCheckPageResults,
  type CheckPageResult, type Db, type LeasedCheckPage, type MonitorRow, type PageHistory, type VersionWrite,
} from '@wds/db';
import { monitorPagesChecked } from '@wds/metrics';
import type { ProcessBatchInput, ProcessBatchResult } from '@wds/workflows/crawl';
import type { PageDeps } from '../scrape/pipeline';
import { announceCheckPages, announceEndedChecks } from './events';
import { observePage, type Observed } from './observe';

const HEARTBEAT_MS = 1_000;
/** Long enough that a slow page never loses its lease mid-fetch (a page's timeout is at most 5 minutes). */
const LEASE_MS = 6 * 60_000;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/**
 * One batch of a monitor run (wds-fetch): lease up to `batchSize` check pages, read the
 * histories they compare with in one query, fetch them `concurrency` at a time (cheap paths
 * first: observe.ts), decide the few whose bytes changed through the change-tracking engine,
 * then store every result, its version write and the end of every check whose pages are all in,
 * in two statements. Unchanged pages cost a fetch, a hash and their share of those statements.
 */
export async function checkMonitorPages(deps: PageDeps, input: ProcessBatchInput): Promise<ProcessBatchResult> {
  const ctx = Context.current();
  const owner = `${ctx.info.workflowExecution?.runId ?? ctx.info.workflowType}:${ctx.info.activityId}`;
  const pages = await claimCheckPages(deps.db, input.jobId, owner, input.batchSize, LEASE_MS, { retakeOwn: ctx.info.attempt > 1 });
  if (!pages.length) return { claimed: 0, succeeded: 0, failed: 0, stopped: false };
  const monitors = await monitorsById(deps.db, [...new Set(pages.map((p) => p.monitorId))]);
  const pageSetups = pages.map((p) => setupOf(monitors.get(p.monitorId), p));
  const histories = await pageHistoriesOf(deps.db, pages.map((p, i) => ({ teamId: p.teamId, tag: pageSetups[i]!.tag, urlKey: p.urlKey, sourceKey: p.pageId })));

  const abort = new AbortController();
  ctx.cancellationSignal.addEventListener('abort', () => abort.abort());
  let done = 0;
  const beat = setInterval(() => ctx.heartbeat({ done }), HEARTBEAT_MS);
  let observed: Observed[];
  try {
    observed = await mapLimit(pages, Math.max(1, input.concurrency), async (p, i) => {
      const r = await observePage(deps, { url: p.url, pageId: p.pageId, options: pageSetups[i]!.options, baseline: histories.get(keyOf(p, pageSetups[i]!.tag))?.baseline ?? null, signal: abort.signal });
      done++;
      return r;
    });
  } finally {
    clearInterval(beat);
  }
  if (abort.signal.aborted) return { claimed: pages.length, succeeded: 0, failed: 0, stopped: true };

  const results = await decideAll(deps.db, pages, pageSetups, observed, histories);
  await storeCheckPageResults(deps.db, results.map((r) => r.result), results.flatMap((r) => (r.write ? [r.write] : [])));
  for (const r of results) monitorPagesChecked.inc({ status: r.result.status, path: r.path });
  await announceCheckPages(deps.db, pages, results.map((r) => r.result), monitors);
  const ended = await endFinishedChecks(deps.db, [...new Set(pages.map((p) => p.checkId))]);
  await announceEndedChecks(deps.db, ended, monitors);
  const failed = results.filter((r) => r.result.status === 'error').length;
  return { claimed: pages.length, succeeded: pages.length - failed, failed, stopped: false };
}

interface Setup {
  options: ScrapeOptions;
  tag: string;
  keepContent: boolean;
}

/** Parsed options by monitor version and target (a monitor's options change only with its row). */
const setupCache = new Map<string, Setup>();

/** A page's scrape options (the target's, fresh: monitors never read the cache) and its history's tag: the monitor's own. */
function setupOf(m: MonitorRow | undefined, p: LeasedCheckPage): Setup {
  const key = `${p.monitorId}|${m?.updatedAt.getTime()}|${p.targetId}`;
  let s = setupCache.get(key);
  if (!s) {
    if (setupCache.size > 20_000) setupCache.clear();
    s = parseSetup(m, p);
    setupCache.set(key, s);
  }
  return s;
}

function parseSetup(m: MonitorRow | undefined, p: LeasedCheckPage): Setup {
  const target = m?.targets.find((t) => t.id === p.targetId) as { scrapeOptions?: Record<string, unknown> } | undefined;
  const options = scrapeOptionsSchema.parse({ ...(target?.scrapeOptions ?? {}), maxAge: 0 });
  const ct = options.formats.find((f) => f.type === 'changeTracking') as { tag?: string | null } | undefined;
  return { options, tag: `monitor:${p.monitorId}${ct?.tag ? `:${ct.tag}` : ''}`, keepContent: !(m?.zeroDataRetention || options.zeroDataRetention) };
}

const keyOf = (p: { teamId: string; urlKey: string }, tag: string) => historyKey(p.teamId, tag, p.urlKey);

interface Decided {
  result: CheckPageResult;
  write: VersionWrite | null;
  path: Observed['path'];
}

/**
 * Unchanged pages are decided here (a sighting of the version they matched); the rest go
 * through the change-tracking engine, grouped by history (team and tag), which compares the
 * markdown, builds the diff and the version write.
 */
async function decideAll(db: Db, pages: LeasedCheckPage[], setups: Setup[], observed: Observed[], histories: Map<string, PageHistory>): Promise<Decided[]> {
  const out: Decided[] = new Array(pages.length);
  const groups = new Map<string, number[]>();
  pages.forEach((p, i) => {
    const o = observed[i]!;
    const baseline = histories.get(keyOf(p, setups[i]!.tag))?.baseline;
    if (o.observation.kind === 'unchanged' && baseline?.status === 'ok') {
      const ob = o.observation;
      out[i] = {
        path: o.path,
        result: resultOf(p, 'same', ob.statusCode, null, idOf(baseline.sourceKey), idOf(baseline.sourceKey), o, null),
        write: { kind: 'seen', teamId: p.teamId, versionId: baseline.id, sourceKey: p.pageId, checkStatus: 'ok', statusCode: ob.statusCode === 304 ? null : ob.statusCode, bodyHash: ob.bodyHash ?? null, etag: ob.etag ?? null, lastModified: ob.lastModified ?? null },
      };
      return;
    }
    const g = `${p.teamId}|${setups[i]!.tag}|${setups[i]!.keepContent}`;
    groups.set(g, [...(groups.get(g) ?? []), i]);
  });
  for (const idx of groups.values()) {
    const first = idx[0]!;
    const tracked = await prepareTracking(db, { teamId: pages[first]!.teamId, tag: setups[first]!.tag, modes: ['git-diff'], keepContent: setups[first]!.keepContent }, idx.map((i) => observed[i]!.observation as PageObservation));
    idx.forEach((i, j) => (out[i] = fromTracking(pages[i]!, observed[i]!, tracked[j]!, histories.get(keyOf(pages[i]!, setups[i]!.tag))?.baseline?.sourceKey ?? null)));
  }
  return out;
}

function fromTracking(p: LeasedCheckPage, o: Observed, t: PageTracking, baselineSource: string | null): Decided {
  const statusCode = 'statusCode' in o.observation ? (o.observation.statusCode ?? null) : null;
  if (t.outcome === 'failed') return { path: 'failed', result: resultOf(p, 'error', statusCode, t.failure ?? 'the page could not be fetched', idOf(baselineSource), null, { ...o, credits: 0 }, null), write: t.write };
  const diff = t.outcome === 'changed' && t.changeTracking?.diff ? (t.changeTracking.diff as unknown) : null;
  const current = t.outcome === 'same' ? idOf(baselineSource) : p.pageId;
  return { path: o.path, result: resultOf(p, t.outcome, statusCode, null, idOf(baselineSource), current, o, diff), write: t.write };
}

function resultOf(p: LeasedCheckPage, status: CheckPageResult['status'], statusCode: number | null, error: string | null, prev: string | null, cur: string | null, o: Observed, diff: unknown): CheckPageResult {
  const credits = status === 'error' ? 0 : Math.max(1, o.credits);
  return {
    checkId: p.checkId, targetId: p.targetId, urlKey: p.urlKey, status, statusCode, error, previousScrapeId: prev, currentScrapeId: cur,
    metadata: { ...(o.title ? { title: o.title } : {}), creditsUsed: credits }, diff, snapshot: null, credits,
  };
}

/** The observation id a version's source key carries (check pages and scrapes are named by uuid). */
const idOf = (sourceKey: string | null | undefined) => (sourceKey ? (UUID.exec(sourceKey)?.[0] ?? null) : null);

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
