import { Context } from '@temporalio/activity';
import { prepareTracking, siteOfKey, type PageObservation } from '@wds/changes';
import type { ScrapeDocument } from '@wds/contracts';
import { createScope, crawlUrlKey, type ScopeOptions } from '@wds/crawl';
import {
  checkPageIdOf, collectTarget, crawlDocumentsAfter, crawlFailures, crawlReachedUrls, ensureCrawlJob, historyKey, knownSitePages, loadCrawlJob,
  monitorsById, pageHistoriesOf, runTarget, runTargetsOf, targetPageKeys, insertCheckPages,
  type Db, type NewCheckPage, type RunTarget, type VersionWrite,
} from '@wds/db';
import type { MonitorCrawlSpec, MonitorTargetTask, TargetRef } from '@wds/workflows/monitor';
import { fromTracking, type MonitorPageDeps, type PendingModelWork } from './batch';
import { needsModel, targetSetup, type TargetSetup } from './setup';

/** Crawled pages compared per statement. */
const CHUNK = 100;

/**
 * The run's targets still to run (wds-control): a crawl target's crawl job is created here from
 * the monitor's resolved spec, under the id the claim chose (idempotent), as a crawl of the
 * monitor's team; a target whose spec is gone (the monitor was edited) runs nothing and is
 * collected as an error.
 */
export async function startMonitorTargets(db: Db, runId: string): Promise<MonitorTargetTask[]> {
  const targets = (await runTargetsOf(db, runId)).filter((t) => t.status === 'pending');
  const monitors = await monitorsById(db, [...new Set(targets.map((t) => t.monitorId))]);
  const tasks: MonitorTargetTask[] = [];
  for (const t of targets) {
    if (t.type === 'search') {
      tasks.push({ checkId: t.checkId, targetId: t.targetId, type: 'search' });
      continue;
    }
    const m = monitors.get(t.monitorId);
    const spec = (m?.crawlSpecs as Record<string, MonitorCrawlSpec> | null | undefined)?.[t.targetId];
    if (!spec || !t.jobId) {
      tasks.push({ checkId: t.checkId, targetId: t.targetId, type: 'crawl' });
      continue;
    }
    await ensureCrawlJob(db, { id: t.jobId, teamId: t.teamId, kind: 'crawl', url: spec.url, options: spec.options, pageLimit: spec.options.limit, zeroDataRetention: !!m?.zeroDataRetention });
    tasks.push({ checkId: t.checkId, targetId: t.targetId, type: 'crawl', crawl: { jobId: t.jobId, plan: spec.plan } });
  }
  return tasks;
}

/**
 * A crawl target's crawl has ended (wds-fetch): each page it stored is compared with the
 * target's version of it (the change-tracking engine, as a fetched page is), a page it failed to
 * fetch is an error (never `removed`), and pages known from earlier checks that this crawl did
 * not reach join the run's frontier as `hidden` — fetched one by one, so only a page that now
 * answers 404/410 is `removed`. The crawl billed its pages: the check counts them without
 * charging them again. Resumable: a retried attempt skips pages already added.
 */
export async function collectCrawlTarget(deps: MonitorPageDeps, ref: TargetRef): Promise<{ pages: number; hidden: number }> {
  const t = await runTarget(deps.db, ref.checkId, ref.targetId);
  if (!t || t.status !== 'pending') return { pages: 0, hidden: 0 };
  const m = (await monitorsById(deps.db, [t.monitorId])).get(t.monitorId);
  const spec = (m?.crawlSpecs as Record<string, MonitorCrawlSpec> | null | undefined)?.[t.targetId];
  const job = t.jobId ? await loadCrawlJob(deps.db, t.jobId) : null;
  if (!m || !spec || !job) {
    await addPages(deps, ref, t, [{ url: spec?.url ?? `target:${t.targetId}`, urlKey: `target:${t.targetId}`, observation: null, error: 'The crawl target could not be run (its settings changed since this check was due).' }], null);
    await collectTarget(deps.db, { checkId: t.checkId, targetId: t.targetId, result: { targetId: t.targetId, type: 'crawl', crawlId: t.jobId } });
    return { pages: 1, hidden: 0 };
  }
  const s = targetSetup(m, t.monitorId, t.targetId);
  const done = await targetPageKeys(deps.db, t.checkId, t.targetId);
  const ctx = Context.current();
  let pages = 0;
  for (let after = 0; ; ) {
    const docs = await crawlDocumentsAfter(deps.db, job.id, after, CHUNK);
    if (!docs.length) break;
    after = docs[docs.length - 1]!.seq;
    pages += await addPages(deps, ref, t, unseen(docs.map((d) => crawledPage(d.document as ScrapeDocument, d.credits)), done), s);
    ctx.heartbeat({ after });
  }
  const failures = (await crawlFailures(deps.db, job.id)).map((f) => ({ ...f, urlKey: crawlUrlKey(f.url) }));
  const start = crawlUrlKey(spec.url);
  // A crawl that failed before storing its start page: that is the target's error.
  if (job.status !== 'completed' && !done.has(start) && !failures.some((f) => f.urlKey === start)) {
    failures.push({ url: spec.url, urlKey: start, error: `The crawl ${job.status === 'cancelled' ? 'was cancelled' : 'failed'}${job.error ? `: ${job.error}` : ''}` });
  }
  pages += await addPages(deps, ref, t, unseen(failures, done).map((f) => ({ url: f.url, urlKey: f.urlKey, observation: { kind: 'failed', url: f.url, sourceKey: checkPageIdOf(t.checkId, t.targetId, f.urlKey), error: f.error } as PageObservation, credits: 0 })), s);
  const reached = new Set((await crawlReachedUrls(deps.db, job.id)).map((u) => crawlUrlKey(u)));
  const hidden = await rememberHidden(deps.db, ref, t, s, spec, reached, done);
  await collectTarget(deps.db, { checkId: t.checkId, targetId: t.targetId, result: { targetId: t.targetId, type: 'crawl', crawlId: job.id } });
  return { pages, hidden };
}

/** Items whose key is not in `done` yet (once each), added to it. */
function unseen<T extends { urlKey: string }>(items: T[], done: Set<string>): T[] {
  return items.filter((x) => !done.has(x.urlKey) && !!done.add(x.urlKey));
}

interface Collected {
  url: string;
  urlKey: string;
  /** null: the target itself failed (`error`). */
  observation: PageObservation | null;
  error?: string;
  /** What the crawl billed for the page. */
  credits?: number;
}

/** A stored crawl page as an observation. Its key is the change-tracking one (the URL's default key), not the crawl's (which may drop queries). */
function crawledPage(doc: ScrapeDocument, credits: number): Collected {
  const url = String(doc.metadata?.sourceURL ?? doc.metadata?.url ?? '');
  const urlKey = crawlUrlKey(url);
  const title = Array.isArray(doc.metadata?.title) ? doc.metadata.title[0] : doc.metadata?.title;
  return { url, urlKey, credits, observation: { kind: 'page', url, sourceKey: '', statusCode: Number(doc.metadata?.statusCode ?? 200), markdown: doc.markdown ?? '', ...(title ? { title: String(title) } : {}) } };
}

/**
 * Compares a chunk of the crawl's pages and adds them to the check in one statement: results
 * with their version writes, or — when the change needs the model — rows waiting for the run's
 * LLM window. Returns how many were added.
 */
async function addPages(deps: MonitorPageDeps, ref: TargetRef, t: RunTarget, items: Collected[], s: TargetSetup | null): Promise<number> {
  if (!items.length) return 0;
  const rows: NewCheckPage[] = [];
  const writes: VersionWrite[] = [];
  const base = (c: Collected) => ({ checkId: t.checkId, targetId: t.targetId, url: c.url, urlKey: c.urlKey, kind: 'page' as const });
  const tracked = items.filter((c) => c.observation && s);
  for (const c of items.filter((x) => !x.observation || !s)) {
    rows.push({ ...base(c), status: 'error', result: { statusCode: null, error: c.error ?? 'the page could not be checked', previousScrapeId: null, currentScrapeId: null, metadata: null, diff: null, snapshot: null, credits: 0 } });
  }
  if (tracked.length && s) {
    const observations = tracked.map((c) => ({ ...c.observation!, sourceKey: checkPageIdOf(t.checkId, t.targetId, c.urlKey) }) as PageObservation);
    const histories = await pageHistoriesOf(deps.db, tracked.map((c, i) => ({ teamId: t.teamId, tag: s.tag, urlKey: c.urlKey, sourceKey: observations[i]!.sourceKey })));
    const out = await prepareTracking(deps.db, { teamId: t.teamId, tag: s.tag, modes: s.modes.filter((x) => x !== 'json'), keepContent: s.keepContent }, observations);
    tracked.forEach((c, i) => {
      const tr = out[i]!;
      const page = { ...base(c), pageId: observations[i]!.sourceKey };
      const prepaidCredits = c.credits ?? 0;
      if (needsModel(s, tr.outcome, deps.llmAvailable)) {
        const work: PendingModelWork = { observation: observations[i]!, credits: 0, ...(observations[i]!.kind === 'page' && observations[i]!.title ? { title: observations[i]!.title } : {}) };
        rows.push({ ...base(c), status: 'llm', pending: work, prepaidCredits });
        return;
      }
      const h = histories.get(historyKey(t.teamId, s.tag, c.urlKey)) ?? null;
      const d = fromTracking(page, { observation: observations[i]!, credits: 0, path: 'converted' }, tr, s, h, { baseCredits: 0 });
      const { checkId: _c, targetId: _t, urlKey: _u, status, ...result } = d.result;
      rows.push({ ...base(c), status, result, prepaidCredits });
      if (d.write) writes.push(d.write);
    });
  }
  await insertCheckPages(deps.db, ref.runId, rows, writes);
  return rows.length;
}

/**
 * Pages of the target's site known from earlier checks (its own history) that this crawl did not
 * reach, within the crawl's scope and limit: queued as `hidden` pages of the run, so each is
 * fetched like any page and only a page that now answers 404/410 is `removed`.
 */
async function rememberHidden(db: Db, ref: TargetRef, t: RunTarget, s: TargetSetup, spec: MonitorCrawlSpec, reached: Set<string>, done: Set<string>): Promise<number> {
  if (!s.keepContent) return 0; // zero data retention keeps no URLs to come back to
  const known = await knownSitePages(db, { teamId: t.teamId, tag: s.tag, site: siteOfKey(crawlUrlKey(spec.url)), limit: spec.options.limit });
  const scope = createScope(spec.url, spec.options as ScopeOptions);
  const rows: NewCheckPage[] = known.flatMap((k) => {
    if (reached.has(k.urlKey) || done.has(k.urlKey)) return [];
    const a = scope.admit(k.url, { depth: 0, external: false });
    return a.ok && !a.external ? [{ checkId: t.checkId, targetId: t.targetId, url: k.url, urlKey: k.urlKey, kind: 'hidden' as const, status: 'queued' as const }] : [];
  });
  await insertCheckPages(db, ref.runId, rows);
  return rows.length;
}
