import { prepareTracking, siteOfKey } from '@wds/changes';
import {
  claimModelPages, deferModelPage, endFinishedChecks, historyKey, monitorRunCounts, monitorsById, pageHistoriesOf, storeCheckPageResults,
  type CheckPageResult, type Db, type ModelPage, type VersionWrite,
} from '@wds/db';
import { addUsage, countTokens, emptyUsage, extractJson, judgeChange, LLM_CREDITS, type LlmClient, type MonitorJudgment, type Usage } from '@wds/llm';
import { monitorPagesChecked } from '@wds/metrics';
import type { LlmBatchInput, LlmBatchResult } from '@wds/workflows/crawl';
import { observeModelCall } from '../llm/model-step';
import { runModelBatch } from '../llm/model-batch';
import { withTokenBudget, type TokenBudget } from '../llm/token-budget';
import { fromTracking, type PendingModelWork } from './batch';
import { announceCheckPages, announceEndedChecks } from './events';
import { resultOf } from './results';
import { targetSetup, type TargetSetup } from './setup';

export interface MonitorModelDeps {
  db: Db;
  client: LlmClient;
  tokens?: TokenBudget | null;
  /** WDS_LLM_PAGE_PATIENCE_MS: how long a page's model step is retried through provider failures. */
  pagePatienceMs: number;
}

const LEASE_MS = 10 * 60_000;

/**
 * One LLM batch of a monitor run (wds-llm; the loop shared with crawls: ../llm/model-batch.ts):
 * each held page gets its model step — json mode's extraction of the new version (and of the
 * old one when its values are not kept), which decides, with the markdown, whether the page
 * changed; then, for a changed page of a monitor with a goal, the judge; a search result is
 * judged against the goal. The page is stored with its version write, and its check ended when
 * it was the last, as a fetch batch does.
 */
export async function checkMonitorModelPages(deps: MonitorModelDeps, input: LlmBatchInput): Promise<LlmBatchResult> {
  const { jobId: runId } = input;
  return runModelBatch<ModelPage>(
    {
      running: async () => (await monitorRunCounts(deps.db, runId)).status === 'scraping',
      claim: async (owner, first) => (await claimModelPages(deps.db, runId, owner, 1, LEASE_MS, { retakeOwn: first }))[0] ?? null,
      run: (page, signal) => modelStep(deps, page, signal),
      defer: (page, owner, waitMs, o) => deferModelPage(deps.db, page, owner, waitMs, o),
      fail: (page, message) => failModelPage(deps.db, page, message),
      attempts: (page) => page.attempts,
      failingMs: (page) => page.failingMs,
    },
    input,
    deps.pagePatienceMs,
  );
}

interface StepOut {
  result: CheckPageResult;
  write: VersionWrite | null;
  usage: Usage;
  credits: number;
}

async function modelStep(deps: MonitorModelDeps, page: ModelPage, signal: AbortSignal): Promise<'stored' | 'skipped'> {
  const monitors = await monitorsById(deps.db, [page.monitorId]);
  const m = monitors.get(page.monitorId);
  const s = targetSetup(m, page.monitorId, page.targetId);
  const work = page.pending as PendingModelWork;
  const estimate = () => 2 * (countTokens(work.observation.kind === 'page' ? work.observation.markdown : '') + 1_500);
  const out = await withTokenBudget(deps.tokens, estimate, () =>
    observeModelCall(deps.client.config.model, 'monitor', (x: StepOut) => x.credits, () => (page.kind === 'search' ? judgeResult(deps, page, s, work, signal) : trackWithModel(deps, page, s, work, signal))),
  );
  const n = await storeCheckPageResults(deps.db, [out.result], out.write ? [out.write] : [], ['llm']);
  if (!n) return 'skipped';
  monitorPagesChecked.inc({ status: out.result.status, path: 'model' });
  await announceCheckPages(deps.db, [page], monitors);
  await announceEndedChecks(deps.db, await endFinishedChecks(deps.db, [page.checkId]), monitors);
  return 'stored';
}

/**
 * A held page of a scrape or crawl target: the change-tracking engine again, now with json
 * mode's extraction (the model reads the new version, and the old one when its values under this
 * schema are not kept), then the judge for a page that changed.
 */
async function trackWithModel(deps: MonitorModelDeps, page: ModelPage, s: TargetSetup, work: PendingModelWork, signal: AbortSignal): Promise<StepOut> {
  let usage = emptyUsage();
  const extract = async (markdown: string) => {
    const x = await extractJson(deps.client, { page: { markdown, url: page.url }, schema: s.json?.schema, prompt: s.json?.prompt, signal });
    usage = addUsage(usage, x.usage);
    return x.data;
  };
  const json = s.json ? { schema: s.json.schema, prompt: s.json.prompt, extract } : undefined;
  const [t] = await prepareTracking(deps.db, { teamId: page.teamId, tag: s.tag, modes: s.modes, keepContent: s.keepContent, json }, [work.observation]);
  const h = (await pageHistoriesOf(deps.db, [{ teamId: page.teamId, tag: s.tag, urlKey: page.urlKey, sourceKey: page.pageId }])).get(historyKey(page.teamId, s.tag, page.urlKey)) ?? null;
  let credits = t!.modelCalls ? LLM_CREDITS.MONITOR_JSON : 0;
  const observed = { observation: work.observation, title: work.title, credits: work.credits, path: 'converted' as const };
  let decided = fromTracking(page, observed, t!, s, h, { baseCredits: work.credits, modelCredits: credits });
  if (s.goal && decided.result.status === 'changed') {
    const diff = decided.result.diff as { text?: string; json?: Record<string, unknown> } | null;
    const fields = s.json && diff?.json ? (diff.json as Record<string, { previous: unknown; current: unknown }>) : undefined;
    const j = await judged(deps, { goal: s.goal, url: page.url, title: work.title, change: { diff: diff?.text, fields }, signal });
    usage = addUsage(usage, j.usage);
    if (j.judgment) credits += LLM_CREDITS.MONITOR_JUDGE;
    decided = fromTracking(page, observed, t!, s, h, { baseCredits: work.credits, modelCredits: credits, judgment: j.judgment ?? undefined });
    if (j.error) decided.result.metadata = { ...(decided.result.metadata as object), judgeError: j.error };
  }
  return { result: decided.result, write: decided.write, usage, credits };
}

/**
 * A new search result: the judge reads its page against the goal. Meaningful with high or
 * medium confidence: `new` (searchStatus `alert`); meaningful with low confidence: `same`
 * (`watching`); not meaningful: `same` (`ignored`). The result is recorded with the verdict and
 * the goal it was made under, so it is `already_seen` until the goal changes.
 */
async function judgeResult(deps: MonitorModelDeps, page: ModelPage, s: TargetSetup, work: PendingModelWork, signal: AbortSignal): Promise<StepOut> {
  const search = work.search ?? {};
  const markdown = work.observation.kind === 'page' ? work.observation.markdown : '';
  const r = await judgeChange(deps.client, { goal: s.goal ?? '', url: page.url, title: work.title ?? search.title, result: { markdown, searchTitle: search.title, searchDescription: search.description }, signal });
  const j = r.judgment;
  const searchStatus = j.meaningful ? (j.confidence === 'low' ? 'watching' : 'alert') : 'ignored';
  const info = { ...(search.title ? { title: search.title } : {}), ...(search.description ? { description: search.description } : {}), ...(search.query ? { query: search.query } : {}) };
  const credits = LLM_CREDITS.MONITOR_JUDGE;
  const result = resultOf(page, { status: searchStatus === 'alert' ? 'new' : 'same', statusCode: work.observation.kind === 'page' ? work.observation.statusCode : null, previous: null, current: page.pageId, metadata: { ...info, searchStatus }, judgment: j, credits });
  const write: VersionWrite = search.seenVersionId !== undefined
    ? { kind: 'seen', teamId: page.teamId, versionId: search.seenVersionId, sourceKey: page.pageId, checkStatus: 'ok', statusCode: null, bodyHash: null, etag: null, lastModified: null, json: j, jsonKey: s.goalKey }
    : searchVersion(page, s, j);
  return { result, write, usage: r.usage, credits };
}

/** A search result's version: the result was seen (and what the judge said of it, under which goal). */
export function searchVersion(page: { teamId: string; urlKey: string; url: string; pageId: string }, s: TargetSetup, judgment: MonitorJudgment | null): VersionWrite {
  return {
    kind: 'version', teamId: page.teamId, urlKey: page.urlKey, site: siteOfKey(page.urlKey), tag: s.tag, url: s.keepContent ? page.url : null, sourceKey: page.pageId,
    status: 'ok', statusCode: null, markdownHash: null, markdown: null, bodyHash: null, etag: null, lastModified: null,
    json: judgment, jsonKey: judgment ? s.goalKey : null,
  };
}

/**
 * The judge on a changed page, allowed to fail: a final failure (a reply that never fits the
 * schema, a refusal) leaves the page unjudged with the reason, rather than losing its change;
 * a retryable one is thrown, so the loop tries the page again later.
 */
async function judged(deps: MonitorModelDeps, input: Parameters<typeof judgeChange>[1]): Promise<{ judgment: MonitorJudgment | null; usage: Usage; error?: string }> {
  try {
    const r = await judgeChange(deps.client, input);
    return { judgment: r.judgment, usage: r.usage };
  } catch (e) {
    const retryable = (e as { retryable?: boolean }).retryable;
    if (retryable !== false) throw e;
    return { judgment: null, usage: emptyUsage(), error: `The goal judge could not judge this change: ${(e as Error).message}` };
  }
}

/** A page whose model step failed for good: an error (nothing recorded, so the next check tries again). */
async function failModelPage(db: Db, page: ModelPage, message: string): Promise<void> {
  const search = page.kind === 'search' ? { searchStatus: 'skipped', ...((page.pending as PendingModelWork)?.search?.title ? { title: (page.pending as PendingModelWork).search!.title } : {}) } : {};
  const result = resultOf(page, { status: 'error', statusCode: null, error: message, previous: null, current: null, metadata: search, credits: 0 });
  if (!(await storeCheckPageResults(db, [result], [], ['llm']))) return;
  const monitors = await monitorsById(db, [page.monitorId]);
  await announceCheckPages(db, [page], monitors);
  await announceEndedChecks(db, await endFinishedChecks(db, [page.checkId]), monitors);
}
