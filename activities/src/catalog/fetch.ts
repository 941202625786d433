import { Context } from '@temporalio/activity';
import { acceptTerms, allEntries, builtinRequest, callError, callSuccess, findTools, invokeHttpProvider, showTerms, type BuiltinRequest, type CallResult, type CatalogCall, type CatalogEntry } from '@wds/catalog';
import { storeCatalogCallResult, type Db } from '@wds/db';
import { toWdsError } from '@wds/errors';
import { parseTbs, runSearch, searchCredits, type SearchProvider } from '@wds/search';
import type { CatalogCallRef, CatalogFetchActivities } from '@wds/workflows/catalog';
import type { DiscoveryDeps } from '../crawl/discovery';
import { asActivity } from '../failures';
import { mapSite } from '../map/activities';
import { entryOrError, loadRequest } from './control';

/**
 * One catalog call on wds-fetch: an operator's HTTP provider (through the SSRF guard), or the
 * built-in map, search, find-tools or terms/show|accept. Whatever the call answers — data or an error — is stored
 * as its result; only infrastructure failures (Postgres) throw, and then the activity is retried
 * (an HTTP provider sees the same Idempotency-Key again).
 */
export interface CatalogFetchDeps extends DiscoveryDeps {
  /** The deployment's search (packages/search), for the built-in `wds/search`. */
  search: SearchProvider;
  /** Map's `search` ranks the team's stored pages unless the index is shared (WDS_SEARCH_SHARED_INDEX). */
  sharedSearchIndex?: boolean;
}

const HEARTBEAT_MS = 2_000;

async function runCall(deps: CatalogFetchDeps, ref: CatalogCallRef, signal: AbortSignal): Promise<void> {
  const { row, calls } = await loadRequest(deps.db, ref.id);
  const call = calls[ref.index]!;
  const entry = await entryOrError(deps.db, ref.id, ref.index, call);
  if (!entry) return;
  const remaining = Math.max(ref.deadlineMs - Date.now(), 1_000);
  let out: { result: CallResult; credits: number };
  try {
    out = entry.target.kind === 'http' ? await httpCall(deps, entry, call, ref, remaining, signal) : await builtinCall(deps, entry, call, row.teamId, remaining, signal);
  } catch (e) {
    if (signal.aborted) throw e;
    // The operation's own failure (a map of an unreachable site, a search provider down): the call's error.
    const err = toWdsError(e);
    if (err.kind === 'INTERNAL') throw e;
    out = { result: callError(call, err.code ?? err.kind, err.message, err.status), credits: 0 };
  }
  await storeCatalogCallResult(deps.db, ref.id, { idx: ref.index, result: out.result, credits: out.credits, chargedBy: 'catalog' });
}

async function httpCall(deps: CatalogFetchDeps, entry: CatalogEntry, call: CatalogCall, ref: CatalogCallRef, timeoutMs: number, signal: AbortSignal) {
  if (entry.target.kind !== 'http') throw new Error('not an HTTP capability');
  const r = await invokeHttpProvider(
    entry.target,
    { provider: call.provider, capability: call.capability, options: call.options, requestId: ref.id, callId: `${ref.id}:${ref.index}` },
    { allowPrivateNetwork: deps.allowPrivateNetwork, timeoutMs, maxBytes: deps.maxBodyBytes, signal },
  );
  if (!r.ok) return { result: callError(call, r.error.code, r.error.message, r.error.status), credits: 0 };
  return { result: callSuccess(call, r.data, entry.creditsCost, { upstreamStatus: r.status }), credits: entry.creditsCost };
}

async function builtinCall(deps: CatalogFetchDeps, entry: CatalogEntry, call: CatalogCall, teamId: string, timeoutMs: number, signal: AbortSignal) {
  if (entry.target.kind !== 'builtin') throw new Error('not a built-in capability');
  const built = builtinRequest(entry.target.operation, call.options, timeoutMs);
  if (!built.ok) return { result: callError(call, 'invalid_options', `Invalid options: ${built.problems.join('; ')}`, 400), credits: 0 };
  const { data, credits } = await runBuiltin(deps, built.value, entry, teamId, timeoutMs, signal);
  return { result: callSuccess(call, data, credits), credits };
}

async function runBuiltin(deps: CatalogFetchDeps, b: BuiltinRequest, entry: CatalogEntry, teamId: string, timeoutMs: number, signal: AbortSignal): Promise<{ data: unknown; credits: number }> {
  switch (b.operation) {
    case 'find-tools':
      return { data: findTools(await allEntries(deps.db), b.request), credits: 0 };
    // Free; an unknown provider or one without terms is the call's 404 (a WdsError, below).
    case 'terms-show':
      return { data: await showTerms(deps.db, teamId, await allEntries(deps.db), b.request.provider), credits: 0 };
    case 'terms-accept':
      return { data: await acceptTerms(deps.db, teamId, await allEntries(deps.db), b.request), credits: 0 };
    case 'map': {
      const links = await mapSite(deps, b.request, signal, { teamId, shared: !!deps.sharedSearchIndex });
      return { data: { links }, credits: entry.creditsCost };
    }
    case 'search': {
      const o = b.request;
      const tbs = o.tbs ? parseTbs(o.tbs) : null;
      const found = await runSearch(
        deps.search,
        { query: o.query, limit: o.limit, sources: ['web'], categories: [], includeDomains: o.includeDomains, excludeDomains: o.excludeDomains, tbs: tbs && !('error' in tbs) ? tbs : null, country: o.country, highlights: true, teamId },
        timeoutMs,
      );
      const web = found.web ?? [];
      return { data: { web, ...(found.warnings.length ? { warning: found.warnings.join(' ') } : {}) }, credits: searchCredits(web.length) };
    }
    case 'scrape':
      throw new Error('the built-in scrape runs as a child scrape workflow');
  }
}

export function createCatalogFetchActivities(deps: CatalogFetchDeps): CatalogFetchActivities {
  return {
    runCatalogCall: (ref: CatalogCallRef) =>
      asActivity(async () => {
        const ctx = Context.current();
        const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
        try {
          await runCall(deps, ref, ctx.cancellationSignal);
        } finally {
          clearInterval(beat);
        }
      }),
  };
}
