import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { agentRequestSchema, agentResultsServed, agentRunOptions, withheldAgentEvent, type AgentRequest, type AgentRunOptions } from '@wds/contracts';
import {
  agentTraceEvents,
  appendJobEvent,
  finishAgentRunRow,
  insertAgentRun,
  jobCreditBalance,
  listTeamAgents,
  loadAgentSnapshot,
  loadTeamAgent,
  nextThreadTurn,
  requestAgentCancel,
  stableUuid,
  teamThreadRuns,
  type AgentRun,
} from '@wds/db';
import { WdsError } from '@wds/errors';
import { compileUserSchema } from '@wds/llm';
import type { AgentPlan } from '@wds/workflows/agent';
import { agentJob } from '@wds/workflows/job-specs';
import { isLive as isLiveStatus } from '@wds/workflows/jobs';
import type { ApiDeps } from '../../deps';
import { noteLogIds } from '../../logging';
import { requireScope } from '../../middleware/auth';
import type { TeamLimitsReader } from '../../middleware/limits';
import { cancelJob, startJob } from '../../services/jobs';
import { agentMaxCreditsWithin } from '../../services/team-caps';
import { baseUrl } from '../../services/base-url';
import { validateBody } from './validate';
import { checkTeamFeatures } from '../../services/team-features';
import { exchangeSummary, pendingApprovalOf, termsAnswer } from './agent-terms';
import { checkJobId, UUID } from './job-id';

/**
 * The agent job (POST /v2/agent and the operations the JS SDK calls: status, list, cancel,
 * trace, snapshot, thread). The API validates and stores the run, then starts its workflow;
 * everything after that is the workflow's (workflows/src/agent). Reads are team-scoped: another
 * team's job is "not found".
 */
export interface AgentConfig {
  plan: AgentPlan;
  publicUrl?: string;
}

/** The SDK's page size (listAgents: "Pages are fixed at 20 runs"). */
const LIST_PAGE = 20;
const MAX_BEFORE_MS = 253_402_300_799_999;
const ZDR_MESSAGE = 'Your team has zero data retention enabled. This is not supported on extract.';

type IdReq = FastifyRequest<{ Params: { id: string; snapshotId?: string; threadId?: string }; Querystring: Record<string, string | undefined> }>;

export function agentRoutes(deps: ApiDeps, cfg: AgentConfig, limitsOf: TeamLimitsReader) {
  return async (app: FastifyInstance) => {
    app.post('/agent', start(deps, cfg, limitsOf));
    app.get('/agent', list(deps, cfg));
    app.get('/agent/threads/:threadId', thread(deps));
    app.get('/agent/:id', status(deps));
    app.delete('/agent/:id', cancel(deps));
    app.get('/agent/:id/trace', trace(deps));
    app.get('/agent/:id/snapshots/:snapshotId', snapshot(deps));
  };
}

function start(deps: ApiDeps, cfg: AgentConfig, limitsOf: TeamLimitsReader) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'agent');
    const body = validateBody(agentRequestSchema, req.body);
    if (req.auth.flags.zeroDataRetention || body.zeroDataRetention) throw new WdsError('BAD_REQUEST', { message: ZDR_MESSAGE, code: 'ZDR_NOT_SUPPORTED' });
    checkTeamFeatures(req.auth, { threatProtection: body.threatProtection }, body.urls ?? []);
    const llm = deps.deployment?.llm ?? { ok: false as const, message: 'no LLM is configured: set OPENAI_API_KEY (or OPENAI_BASE_URL / OLLAMA_BASE_URL with MODEL_NAME)' };
    if (!llm.ok) {
      throw new WdsError('FEATURE_NOT_AVAILABLE', {
        message: `Agent jobs are not available in this deployment: ${llm.message}.`,
        code: 'FEATURE_NOT_AVAILABLE',
        details: [{ field: 'prompt', message: `agents need a model: ${llm.message}` }],
      });
    }
    checkApprovals(body.exchange);
    // A schema that is not JSON Schema is the caller's error (422), before anything runs.
    if (body.schema) await compileUserSchema(body.schema);

    const id = randomUUID();
    noteLogIds(req, { jobId: id });
    let threadId: string = id;
    let threadTurn = 1;
    let prev: AgentRun | undefined;
    if (body.threadId) {
      const next = await nextThreadTurn(deps.db, req.auth.teamId, body.threadId);
      if (!next) throw new WdsError('NOT_FOUND', { message: 'Agent thread not found' });
      if (next.busy) throw new WdsError('CONFLICT', { message: 'The previous turn of this thread is still running; wait for it (or cancel it) first.', code: 'THREAD_BUSY' });
      threadId = body.threadId;
      threadTurn = next.turn;
      prev = (await teamThreadRuns(deps.db, req.auth.teamId, threadId)).at(-1);
    }
    const options = agentRunOptions(body, prev?.options as AgentRunOptions | undefined);
    options.maxCredits = agentMaxCreditsWithin(body.maxCredits, await limitsOf(req.auth.teamId));
    if (options.exchange && !req.auth.flags.catalog) {
      throw new WdsError('FORBIDDEN', { message: 'Forbidden: exchange (catalog tools) is not enabled for this team.', code: 'CATALOG_NOT_ENABLED' });
    }
    const answer = await termsAnswer(deps.db, body.exchange, prev);
    if (answer && options.exchange) options.exchange.termsAnswer = answer;
    await insertAgentRun(deps.db, { id, teamId: req.auth.teamId, rootId: id, threadId, threadTurn, options });
    await startJob(deps, agentJob, {
      jobId: id,
      args: [{ runId: id, rootId: id, plan: cfg.plan }],
      // Nothing will ever run it: the turn is failed at once (unbilled), its thread's expiry set again.
      fail: () => finishAgentRunRow(deps.db, id, { state: 'internal', error: 'The agent could not be started (the workflow service did not accept it).', creditsUsed: 0, root: true }),
    });
    return reply.send({ success: true, id, threadId, threadTurn });
  };
}

async function teamAgent(deps: ApiDeps, req: IdReq): Promise<AgentRun> {
  requireScope(req, 'agent');
  const { id } = req.params;
  checkJobId(id);
  const row = await loadTeamAgent(deps.db, req.auth.teamId, id);
  if (!row) throw new WdsError('NOT_FOUND', { message: 'Agent job not found' });
  return row;
}

const isLive = (r: AgentRun) => isLiveStatus(r.status);

/** While a turn of its thread runs, a run has no expiry of its own: it reads as 24 hours after its end (or start). */
const expiresAtOf = (r: AgentRun) => r.expiresAt ?? new Date((r.finishedAt ?? r.createdAt).getTime() + agentJob.resultsKeptMs!);

/** creditsUsed: an ended job's bill; a running job's credits reserved and charged so far (live; upstream shows 0 until the end). */
async function creditsOf(deps: ApiDeps, r: AgentRun): Promise<number> {
  if (!isLive(r)) return r.creditsUsed;
  const b = await jobCreditBalance(deps.db, r.id);
  return b.used + b.reserved;
}

function status(deps: ApiDeps) {
  return async (req: IdReq, reply: FastifyReply) => {
    const r = await teamAgent(deps, req);
    const o = r.options as AgentRunOptions;
    const st = agentJob.publicStatus(r);
    return reply.send({
      success: true,
      status: st,
      // Only a completed (billed) job returns data (spec: a failed run is unbilled and has none).
      ...(r.data !== null && agentResultsServed(r.state) ? { data: r.data } : {}),
      ...(r.state === 'cancelling' ? { error: 'Agent is being cancelled' } : r.error ? { error: r.error } : {}),
      ...(r.message ? { message: r.message } : {}),
      model: o.model,
      ...(o.effort ? { effort: o.effort } : {}),
      mode: o.mode,
      creditsUsed: await creditsOf(deps, r),
      expiresAt: expiresAtOf(r).toISOString(),
      threadId: r.threadId,
      threadTurn: r.threadTurn,
      steps: r.steps,
      createdAt: r.createdAt.toISOString(),
      ...(r.finishedAt ? { finishedAt: r.finishedAt.toISOString() } : {}),
      ...(o.exchange ? { exchange: await exchangeSummary(deps.db, r, o.exchange, st) } : {}),
      ...(o.exchange ? await pendingOf(deps, r) : {}),
    });
  };
}

/**
 * `exchange` (Firecrawl's Exchange: the catalog of provider tools) gives the agent `find_tools`
 * and `call_tool` over the operator's catalog; it needs the team's catalog access (403, as catalog
 * mode). Approvals of paid calls are not built: `requireApproval` answers 400; `approve` and
 * `decline` answer a terms offer only (agent-terms.ts).
 */
function checkApprovals(x: AgentRequest['exchange']) {
  if (x?.requireApproval) {
    throw new WdsError('FEATURE_NOT_AVAILABLE', {
      message: "'exchange.requireApproval' is not available in this deployment: approvals of paid provider calls are not built (use maxCalls to bound them).",
      code: 'FEATURE_NOT_AVAILABLE',
      details: [{ field: 'exchange.requireApproval' }],
    });
  }
}

/** `pendingApproval` of a run's status: its terms offer, resolved by a later turn of its thread. */
async function pendingOf(deps: ApiDeps, r: AgentRun): Promise<{ pendingApproval?: unknown }> {
  if (r.parentId || r.state !== 'succeeded') return {};
  const later = (await teamThreadRuns(deps.db, r.teamId, r.threadId)).filter((t) => t.threadTurn > r.threadTurn);
  const p = await pendingApprovalOf(deps.db, r, later);
  return p ? { pendingApproval: p } : {};
}

function list(deps: ApiDeps, cfg: AgentConfig) {
  return async (req: FastifyRequest<{ Querystring: { before?: string } }>, reply: FastifyReply) => {
    requireScope(req, 'agent');
    const raw = req.query.before;
    const before = raw === undefined || raw === '' ? null : Number(raw);
    // Bounded to the year 9999: Postgres's timestamps end there (a larger value would be its error, a 500).
    if (before !== null && (!Number.isSafeInteger(before) || before < 0 || before > MAX_BEFORE_MS)) {
      throw new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_value', path: ['before'], message: 'before must be a unix timestamp in milliseconds' }] });
    }
    const rows = await listTeamAgents(deps.db, req.auth.teamId, before, LIST_PAGE + 1);
    const page = rows.slice(0, LIST_PAGE);
    const last = page.at(-1);
    const next = rows.length > LIST_PAGE && last ? `${baseUrl(req, cfg.publicUrl)}/v2/agent?before=${last.createdAt.getTime()}` : undefined;
    return reply.send({
      success: true,
      agents: page.map((r) => {
        const o = r.options as AgentRunOptions;
        return {
          id: r.id,
          createdAt: r.createdAt.toISOString(),
          targetHint: o.urls?.[0] ?? o.prompt.slice(0, 120),
          origin: o.origin ?? 'api',
          ...(o.integration ? { integration: o.integration } : {}),
          settings: { hidden: false, starred: false },
          status: agentJob.publicStatus(r),
          options: { ...(o.urls ? { urls: o.urls } : {}), prompt: o.prompt, ...(o.schema ? { schema: o.schema } : {}), model: o.model, ...(o.effort ? { effort: o.effort } : {}) },
        };
      }),
      ...(next ? { next } : {}),
    });
  };
}

function cancel(deps: ApiDeps) {
  return async (req: IdReq, reply: FastifyReply) => {
    const r = await teamAgent(deps, req);
    const c = await requestAgentCancel(deps.db, r.id);
    if (c.outcome === 'already_cancelling') throw new WdsError('CONFLICT', { message: 'Agent is already cancelled' });
    if (c.outcome === 'finished') throw new WdsError('CONFLICT', { message: 'Agent already finished' });
    // Recorded at once (the trace shows it before the workflow has stopped), then the workflow is told.
    await appendJobEvent(deps.db, {
      jobId: r.id,
      type: 'run.cancel_requested',
      key: 'run.cancel_requested',
      payload: { eventId: stableUuid('agent-event', r.id, 'run.cancel_requested'), reason: 'user' },
    });
    await cancelJob(deps, agentJob, r.id);
    return reply.send({ success: true });
  };
}

function trace(deps: ApiDeps) {
  return async (req: IdReq, reply: FastifyReply) => {
    const r = await teamAgent(deps, req);
    const rows = await agentTraceEvents(deps.db, r.id);
    // Running or unbilled: the trace shows the run's shape, not what it read or the model wrote.
    const served = agentResultsServed(r.state);
    const events = rows.map((e) => {
      const payload = served ? e.payload : withheldAgentEvent(e.type, e.payload);
      const { eventId, ...fields } = payload as { eventId?: string } & Record<string, unknown>;
      return {
        schemaVersion: 1,
        eventId: eventId ?? stableUuid('agent-event', e.runId, String(e.seq)),
        runId: r.id,
        occurredAt: e.createdAt.toISOString(),
        producerSequence: e.seq,
        agent: { id: e.runId, role: e.parentId ? 'subagent' : 'orchestrator', name: e.name, ...(e.parentId ? { parentId: e.parentId } : {}) },
        type: e.type,
        ...fields,
      };
    });
    return reply.send({
      success: true,
      id: r.id,
      events,
      creditsUsed: await creditsOf(deps, r),
      // The agent's browser renders are pooled pages without a live view.
      ...(req.query.liveView === 'true' ? { activeBrowserSessions: [] } : {}),
    });
  };
}

function snapshot(deps: ApiDeps) {
  return async (req: IdReq, reply: FastifyReply) => {
    const sid = req.params.snapshotId ?? '';
    checkJobId(req.params.id);
    if (!UUID.test(sid)) throw new WdsError('BAD_REQUEST', { message: 'Invalid snapshot ID' });
    const r = await teamAgent(deps, req);
    const s = await loadAgentSnapshot(deps.db, r.id, sid);
    if (!s) throw new WdsError('NOT_FOUND', { message: 'Snapshot not found' });
    if (!agentResultsServed(r.state)) {
      throw new WdsError('CONFLICT', {
        code: 'AGENT_RESULTS_WITHHELD',
        message: isLive(r)
          ? 'Agent snapshots are served once the agent has completed; this job is still running.'
          : 'This agent job did not complete: failed runs are not billed, and their snapshots are not served.',
      });
    }
    return reply.send({ success: true, id: r.id, snapshotId: s.id, snapshot: s.content });
  };
}

function thread(deps: ApiDeps) {
  return async (req: IdReq, reply: FastifyReply) => {
    requireScope(req, 'agent');
    const threadId = req.params.threadId ?? '';
    if (!UUID.test(threadId)) throw new WdsError('BAD_REQUEST', { message: 'Invalid thread ID format. Thread ID must be a valid UUID.' });
    const runs = await teamThreadRuns(deps.db, req.auth.teamId, threadId);
    if (!runs.length) throw new WdsError('NOT_FOUND', { message: 'Agent thread not found' });
    const includeData = req.query.includeData === 'true';
    const pending = await Promise.all(runs.map((r, i) => ((r.options as AgentRunOptions).exchange ? pendingApprovalOf(deps.db, r, runs.slice(i + 1)) : null)));
    const updated = runs.reduce((t, r) => Math.max(t, (r.finishedAt ?? r.createdAt).getTime()), 0);
    return reply.send({
      success: true,
      thread: {
        id: threadId,
        createdAt: runs[0]!.createdAt.toISOString(),
        updatedAt: new Date(updated).toISOString(),
        status: runs.some(isLive) ? 'running' : 'idle',
        runs: runs.map((r, i) => {
          const o = r.options as AgentRunOptions;
          return {
            id: r.id,
            turn: r.threadTurn,
            mode: o.mode,
            prompt: o.prompt,
            ...(o.urls ? { urls: o.urls } : {}),
            ...(o.schema ? { schema: o.schema } : {}),
            ...(o.effort ? { effort: o.effort } : {}),
            status: threadStatus(r.state),
            createdAt: r.createdAt.toISOString(),
            finishedAt: r.finishedAt?.toISOString() ?? null,
            creditsUsed: isLive(r) ? null : r.creditsUsed,
            message: r.message ?? r.error ?? null,
            ...(includeData && agentResultsServed(r.state) ? { data: r.data } : {}),
            ...(o.exchange ? { pendingApproval: pending[i] ?? null } : {}),
          };
        }),
      },
    });
  };
}

/** The SDK's AgentThreadRun.status: the run's own end (parent_finished and internal read as failed). */
function threadStatus(state: string): string {
  if (state === 'running' || state === 'cancelling') return 'processing';
  if (['succeeded', 'cancelled', 'refused', 'credit_limit_reached'].includes(state)) return state;
  return 'failed';
}
