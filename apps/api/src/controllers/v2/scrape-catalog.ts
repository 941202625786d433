import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { builtinRequest, optionProblems, requestFingerprint, resolveEntry, termsGates, termsRequiredError, type CatalogEntry } from '@wds/catalog';
import { catalogCallsOf, scrapeCatalogRequestSchema, type CatalogCallInput } from '@wds/contracts';
import { insertCatalogRequest, loadCatalogRequest, type CatalogRequestRow } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { ApiDeps } from '../../deps';
import { noteLogIds } from '../../logging';
import { validateBody } from './validate';

/**
 * Catalog mode of POST /v2/scrape (spec: Catalog call, its four rules and the scrape error
 * table). The (team, x-request-id) record in Postgres is the idempotency key: inserting it is
 * what makes a request the one that runs; every other request with that id reads it and
 * replays the stored answer (same `scrape_id`), or answers 409 `duplicate_request` (other calls),
 * 409 `request_in_flight` (still running) or 503 `request_unresolved` (outcome unknown). The calls
 * run in a workflow whose id is derived from team and request id (packages/catalog README).
 */

/** A record still `pending` this long after it was written lost the API that wrote it before its workflow began: a retry starts it. */
const ORPHAN_AFTER_MS = 15_000;
/** How long past the request's timeout the API waits for the workflow's answer before saying the outcome is unknown. */
const ANSWER_GRACE_MS = 10_000;

const unresolved = (id: string, why: string) =>
  new WdsError('SERVICE_UNAVAILABLE', { code: 'request_unresolved', chargeId: id, message: `Service Unavailable: ${why} Retry with the same x-request-id, not a new request.` });

export async function catalogMode(deps: ApiDeps, req: FastifyRequest, reply: FastifyReply) {
  const o = validateBody(scrapeCatalogRequestSchema, req.body);
  if (!req.auth.flags.catalog) throw new WdsError('FORBIDDEN', { message: 'Forbidden: catalog execution is not enabled for this team.', code: 'CATALOG_NOT_ENABLED' });
  // A team under zero data retention cannot send its data to third-party providers (spec: 403 "zero data retention active").
  if (req.auth.flags.zeroDataRetention) throw new WdsError('FORBIDDEN', { message: 'Forbidden: catalog execution is not available to a team with zero data retention enabled.', code: 'ZDR_NOT_SUPPORTED' });
  const requestId = (req.headers['x-request-id'] as string | undefined) ?? randomUUID();
  reply.header('x-request-id', requestId);
  const calls = catalogCallsOf(o);
  const ctx: Ctx = { deps, teamId: req.auth.teamId, requestId, fingerprint: requestFingerprint(calls), calls, timeoutMs: o.timeout };

  const prior = await loadCatalogRequest(deps.db, ctx.teamId, requestId);
  const answer = prior ? await answerExisting(ctx, prior) : await runNew(ctx);
  noteLogIds(req, { scrapeId: answer.scrape_id as string });
  return reply.send(answer);
}

interface Ctx {
  deps: ApiDeps;
  teamId: string;
  requestId: string;
  fingerprint: string;
  calls: CatalogCallInput[];
  timeoutMs: number;
}

type Answer = Record<string, unknown>;

/**
 * Rule 3, the options' schemas and the providers' data terms: a 404, 400 or 403 here means
 * nothing was stored and nothing ran.
 */
async function checkCalls(ctx: Ctx): Promise<void> {
  const details: { code: string; path: (string | number)[]; message: string }[] = [];
  const entries: CatalogEntry[] = [];
  for (const [i, call] of ctx.calls.entries()) {
    const entry = await resolveEntry(ctx.deps.db, call.provider, call.capability);
    if (!entry) throw new WdsError('NOT_FOUND', { code: 'unknown_provider', message: `Unknown provider or capability: ${call.provider}/${call.capability}. Nothing was executed.` });
    entries.push(entry);
    const problems = await optionProblems(entry, call.options);
    if (!problems.length && entry.target.kind === 'builtin') {
      const built = builtinRequest(entry.target.operation, call.options, ctx.timeoutMs);
      if (!built.ok) problems.push(...built.problems);
    }
    for (const message of problems) details.push({ code: 'invalid_options', path: ['catalog', i, 'options'], message });
  }
  if (details.length) throw new WdsError('BAD_REQUEST', { details });
  const gates = await termsGates(ctx.deps.db, ctx.teamId, entries);
  if (gates.length) throw termsRequiredError(gates);
}

async function runNew(ctx: Ctx): Promise<Answer> {
  await checkCalls(ctx);
  const id = randomUUID();
  const inserted = await insertCatalogRequest(ctx.deps.db, { id, teamId: ctx.teamId, requestId: ctx.requestId, fingerprint: ctx.fingerprint, calls: ctx.calls, timeoutMs: ctx.timeoutMs });
  if (!inserted) {
    // Another request with this id was stored first: it is the one that runs.
    const other = await loadCatalogRequest(ctx.deps.db, ctx.teamId, ctx.requestId);
    if (other) return answerExisting(ctx, other);
    throw unresolved(id, 'a request with this x-request-id was stored and removed while this one was being accepted.');
  }
  return run(ctx, id);
}

/** Starts (or joins) the workflow of the request this process owns, and waits for its answer. */
async function run(ctx: Ctx, id: string): Promise<Answer> {
  const { deps, teamId, requestId } = ctx;
  try {
    await deps.starters.startCatalog({ teamId, requestId, id, timeoutMs: ctx.timeoutMs });
  } catch (e) {
    throw Object.assign(unresolved(id, 'the workflow service did not confirm the start of this request.'), { cause: e });
  }
  let result: Awaited<ReturnType<typeof deps.starters.awaitCatalog>> | 'ended';
  try {
    result = await deps.starters.awaitCatalog({ teamId, requestId, budgetMs: ctx.timeoutMs + ANSWER_GRACE_MS });
  } catch {
    // The workflow failed or was terminated: whatever its calls did is not known here.
    result = 'ended';
  }
  if (typeof result === 'object' && result.outcome === 'insufficient_credits') {
    throw new WdsError('PAYMENT_REQUIRED', { code: 'insufficient_credits', message: `Payment Required: ${result.message} Nothing was executed.` });
  }
  const row = await loadCatalogRequest(deps.db, teamId, requestId);
  if (row?.id === id && row.status === 'completed') return row.response as Answer;
  if (result === 'timeout') throw unresolved(id, `the request did not finish within its timeout of ${ctx.timeoutMs} ms; it may still complete.`);
  throw unresolved(id, 'the request ended without an answer.');
}

/** A request with this x-request-id exists: replay, refuse, or (an orphan nobody started) start it. */
async function answerExisting(ctx: Ctx, row: CatalogRequestRow): Promise<Answer> {
  if (row.fingerprint !== ctx.fingerprint) {
    throw new WdsError('CONFLICT', { code: 'duplicate_request', chargeId: row.id, message: 'Conflict: this x-request-id belongs to a request with other calls or options. Use a new x-request-id for a new request.' });
  }
  if (row.status === 'completed') return row.response as Answer;
  if (row.status === 'unresolved') throw unresolved(row.id, 'the outcome of the request with this x-request-id is unknown.');
  if (await ctx.deps.starters.catalogRunning({ teamId: ctx.teamId, requestId: ctx.requestId })) throw inFlight(row.id);
  // Not running: it finished between the two reads, or was refused for credits (record gone), or never began.
  const now = await loadCatalogRequest(ctx.deps.db, ctx.teamId, ctx.requestId);
  if (!now) return runNew(ctx);
  if (now.id !== row.id) return answerExisting(ctx, now);
  if (now.status === 'completed') return now.response as Answer;
  if (now.status === 'pending') {
    if (Date.now() - now.createdAt.getTime() < ORPHAN_AFTER_MS) throw inFlight(now.id);
    return run(ctx, now.id);
  }
  // The workflow began between the two reads (its first step marks the record running): it was not
  // running when asked but may be now, so ask again. Statuses only move forward, so this ends.
  if (now.status !== row.status) return answerExisting(ctx, now);
  throw unresolved(now.id, 'the request with this x-request-id ended without an answer.');
}

const inFlight = (id: string) =>
  new WdsError('CONFLICT', { code: 'request_in_flight', chargeId: id, message: 'Conflict: the request with this x-request-id is still running. Retry with the same x-request-id once it finishes.' });
