import { builtinRequest, callError, callSuccess, reservationOf, resolveEntry, type CallResult, type CatalogCall, type CatalogEntry } from '@wds/catalog';
import {
  beginCatalogRequest,
  chargeCredits,
  completeCatalogRequest,
  deleteCatalogRequest,
  insertScrapeJob,
  loadCatalogCallResults,
  loadCatalogRequestById,
  loadScrapeJob,
  markCatalogUnresolved,
  releaseJobReservations,
  releaseReservation,
  reserveCredits,
  stableUuid,
  storeCatalogCallResult,
  teamCreditLimit,
  type Db,
} from '@wds/db';
import { ERROR_KINDS, isErrorKind, WdsError } from '@wds/errors';
import type { BeginCatalogResult, CatalogCallRef, CatalogControlActivities, CatalogRef, CollectScrapeInput } from '@wds/workflows/catalog';
import { asActivity } from '../failures';

/**
 * The bookkeeping of a catalog request (wds-control): credits are reserved per call before
 * anything runs (`catalog:<id>:<index>:reserve`), each successful call is billed once
 * (`catalog:<id>:<index>`, converting its reservation), everything else is released, and the
 * answer is stored for replays. Keys are natural, so a retried activity bills nothing twice.
 */
export interface CatalogControlDeps {
  db: Db;
}

export const reserveKey = (id: string, index: number) => `catalog:${id}:${index}:reserve`;
const chargeKey = (id: string, index: number) => `catalog:${id}:${index}`;

export async function loadRequest(db: Db, id: string) {
  const row = await loadCatalogRequestById(db, id);
  if (!row) throw new WdsError('NOT_FOUND', { message: `Catalog request ${id} not found` });
  return { row, calls: row.calls as CatalogCall[] };
}

/** The call's capability as it is now; a capability removed since the API accepted the call is that call's 404. */
export async function entryOrError(db: Db, id: string, index: number, call: CatalogCall): Promise<CatalogEntry | null> {
  const entry = await resolveEntry(db, call.provider, call.capability);
  if (!entry) await storeCatalogCallResult(db, id, { idx: index, result: callError(call, 'unknown_provider', `Unknown provider or capability: ${call.provider}/${call.capability}`, 404), credits: 0, chargedBy: 'catalog' });
  return entry;
}

async function begin(db: Db, id: string): Promise<BeginCatalogResult> {
  const row = await beginCatalogRequest(db, id);
  if (!row) return { state: 'gone' };
  const calls = row.calls as CatalogCall[];
  const teamCap = await teamCreditLimit(db, row.teamId);
  const resolved: { index: number; entry: CatalogEntry; amount: number }[] = [];
  for (const [index, call] of calls.entries()) {
    const entry = await entryOrError(db, id, index, call);
    if (entry) resolved.push({ index, entry, amount: reservationOf(entry, call.options) });
  }
  const needed = resolved.reduce((n, r) => n + r.amount, 0);
  for (const { index, amount } of resolved) {
    const r = amount > 0 ? await reserveCredits(db, { teamId: row.teamId, jobId: id, kind: 'catalog', amount, key: reserveKey(id, index), teamCap }) : { granted: true as const };
    if (r.granted) continue;
    // Nothing has run: give back what the earlier calls reserved, and forget the request.
    await releaseJobReservations(db, id);
    await deleteCatalogRequest(db, id);
    return {
      state: 'refused',
      message: `Insufficient credits: this request needs ${needed} credits, and the team's credit limit of ${r.cap} leaves ${Math.max(r.cap - r.balance.used - r.balance.reserved, 0)} (${r.balance.used} used, ${r.balance.reserved} reserved).`,
    };
  }
  const plan = resolved.map(({ index, entry }) => ({ index, runs: entry.target.kind === 'builtin' && entry.target.operation === 'scrape' ? ('scrape' as const) : ('fetch' as const) }));
  return { state: 'begun', calls: plan };
}

async function prepareScrape(db: Db, { id, index, deadlineMs }: CatalogCallRef): Promise<{ jobId: string } | null> {
  const { row, calls } = await loadRequest(db, id);
  const call = calls[index]!;
  const built = builtinRequest('scrape', call.options, deadlineMs - Date.now());
  if (!built.ok || built.value.operation !== 'scrape') {
    const problems = built.ok ? ['not a scrape'] : built.problems;
    await storeCatalogCallResult(db, id, { idx: index, result: callError(call, 'invalid_options', `Invalid options: ${problems.join('; ')}`, 400), credits: 0, chargedBy: 'catalog' });
    return null;
  }
  const jobId = stableUuid('catalog-scrape', id, String(index));
  await insertScrapeJob(db, { id: jobId, teamId: row.teamId, url: built.value.request.url, options: built.value.request });
  return { jobId };
}

async function collectScrape(db: Db, i: CollectScrapeInput): Promise<void> {
  const { calls } = await loadRequest(db, i.id);
  const call = calls[i.index]!;
  const job = await loadScrapeJob(db, i.jobId);
  let result: CallResult;
  let credits = 0;
  if (i.error || !job || job.status !== 'completed' || !job.document) {
    const e = (i.error ?? (job?.error as { kind?: string; message?: string; code?: string } | null) ?? {}) as { kind?: string; message?: string; code?: string };
    const status = e.kind && isErrorKind(e.kind) ? ERROR_KINDS[e.kind].status : 500;
    result = callError(call, e.code ?? e.kind ?? 'scrape_failed', e.message ?? 'The scrape failed.', status);
  } else {
    credits = job.creditsUsed;
    result = callSuccess(call, job.document, credits);
  }
  // The scrape job billed itself (`scrape:<jobId>`), as any scrape does.
  await storeCatalogCallResult(db, i.id, { idx: i.index, result, credits, chargedBy: 'job' });
}

async function finish(db: Db, id: string): Promise<void> {
  const { row, calls } = await loadRequest(db, id);
  const results = new Map((await loadCatalogCallResults(db, id)).map((r) => [r.idx, r]));
  const alexandria: CallResult[] = [];
  let total = 0;
  for (const [index, call] of calls.entries()) {
    const r = results.get(index);
    const ok = !!r && !('error' in (r.result as object));
    if (ok && r.chargedBy === 'catalog' && r.credits > 0) {
      await chargeCredits(db, { teamId: row.teamId, jobId: id, kind: 'catalog', amount: r.credits, key: chargeKey(id, index), reservationKey: reserveKey(id, index) });
    } else {
      await releaseReservation(db, { teamId: row.teamId, jobId: id, kind: 'catalog', reservationKey: reserveKey(id, index) });
    }
    if (ok) total += r.credits;
    alexandria.push(r ? (r.result as CallResult) : callError(call, 'call_not_run', 'The call did not run.', 500));
  }
  await completeCatalogRequest(db, id, { success: true, scrape_id: id, data: { alexandria, creditsCost: total } }, total);
}

async function abandon(db: Db, id: string): Promise<void> {
  await markCatalogUnresolved(db, id);
  await releaseJobReservations(db, id);
}

export function createCatalogControlActivities(deps: CatalogControlDeps): CatalogControlActivities {
  const { db } = deps;
  return {
    beginCatalog: ({ id }: CatalogRef) => asActivity(() => begin(db, id)),
    prepareCatalogScrape: (i: CatalogCallRef) => asActivity(() => prepareScrape(db, i)),
    collectCatalogScrape: (i: CollectScrapeInput) => asActivity(() => collectScrape(db, i)),
    finishCatalog: ({ id }: CatalogRef) => asActivity(() => finish(db, id)),
    abandonCatalog: ({ id }: CatalogRef) => asActivity(() => abandon(db, id)),
  };
}
