import { createHash } from 'node:crypto';
import { and, asc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { agentJob, agentJobEnd, agentState, type AgentEndState } from '@wds/workflows/job-specs';
import type { JobStatus } from '@wds/workflows/jobs';
import type { Db } from './client';
import { endJobSql, insertJobSql } from './jobs/index';
import { agentRuns, jobs, teamLimits } from './schema/index';
import { storable } from './text';

/**
 * Agent runs (schema/agents.ts): every run a `jobs` row of kind `agent` with its extension, the
 * transcript the model reads, artifact snapshots. Every write an activity makes is idempotent on a
 * natural key (a message's key, a snapshot's derived id, a transition guarded by the job's status),
 * so a retried activity rewrites nothing twice. Reads for the API take the team id (another team's
 * job reads as missing); agent-reads.ts holds the trace, list and thread reads.
 */

/** A run as its readers see it: the extension and its job row, with the run's state word. */
export type AgentRun = {
  id: string;
  teamId: string;
  /** The job a client started (= id for a root). */
  rootId: string;
  /** The run that spawned it (null: a root). */
  parentId: string | null;
  threadId: string;
  threadTurn: number;
  name: string;
  status: JobStatus;
  outcome: string | null;
  /** running, cancelling, or how it ended (@wds/contracts AGENT_STATES): agentState of status and outcome. */
  state: ReturnType<typeof agentState>;
  /** The request with its defaults (AgentRunOptions); a sub-agent's holds its own prompt and URLs. */
  options: unknown;
  data: unknown;
  message: string | null;
  error: string | null;
  /** Final credits billed (0 for a failed run); live values come from the ledger. */
  creditsUsed: number;
  steps: number;
  createdAt: Date;
  finishedAt: Date | null;
  /** When the expiry path deletes it; null while its thread runs (and for a sub-agent: it goes with its root). */
  expiresAt: Date | null;
};

/** The job row of a run's root, as the activities read it with the run. */
export type AgentRoot = Pick<AgentRun, 'id' | 'teamId' | 'status' | 'outcome' | 'state' | 'options'>;

type JobRow = typeof jobs.$inferSelect;

function rootOf(j: JobRow): AgentRoot {
  return { id: j.id, teamId: j.teamId!, status: j.status, outcome: j.outcome, state: agentState(j), options: j.options };
}

function runOf(r: { a: typeof agentRuns.$inferSelect; j: JobRow }): AgentRun {
  const { a, j } = r;
  return {
    ...rootOf(j),
    rootId: a.rootId, parentId: a.parentId, threadId: a.threadId, threadTurn: a.threadTurn, name: a.name, data: a.data, message: a.message, steps: a.steps,
    error: j.error?.message ?? null, creditsUsed: j.creditsUsed, createdAt: j.createdAt, finishedAt: j.finishedAt, expiresAt: j.expiresAt,
  };
}

/** Runs with their job rows, filtered by `where`: the one shape every run read has. */
export async function selectAgentRuns(db: Db, where: SQL | undefined, order: SQL[] = [], limit?: number): Promise<AgentRun[]> {
  const q = db.select({ a: agentRuns, j: jobs }).from(agentRuns).innerJoin(jobs, eq(jobs.id, agentRuns.id)).where(where).orderBy(...order);
  return (await (limit === undefined ? q : q.limit(limit))).map(runOf);
}

/** A UUID derived from its parts (name-based, RFC 4122 version 5 layout): the same parts, the same id. */
export function stableUuid(...parts: string[]): string {
  const h = createHash('sha1').update(parts.join('\u0000')).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export interface NewAgentRun {
  id: string;
  teamId: string;
  rootId: string;
  /** Set for a sub-agent: the run that spawned it (its job goes with its root). */
  parentId?: string | null;
  threadId: string;
  threadTurn?: number;
  name?: string;
  options: unknown;
}

/**
 * The job row (running: the API starts its workflow next) and the run, in one statement. A root
 * is a turn of its thread: while it runs no turn of the thread expires (theirs is cleared here, and
 * set again when a turn ends: finishAgentRunRow). A sub-agent's job has its root as parent and no
 * workflow id yet (startAgentRun records it once its workflow runs).
 */
export async function insertAgentRun(db: Db, r: NewAgentRun): Promise<void> {
  const root = !r.parentId;
  const job = insertJobSql({
    id: r.id, teamId: r.teamId, kind: 'agent', status: 'running', options: r.options, parentId: root ? null : r.rootId, workflowId: root ? agentJob.workflowId(r.id) : null,
  });
  const held = root
    ? sql`, held AS (UPDATE jobs SET expires_at = NULL WHERE id IN (SELECT id FROM agent_runs WHERE thread_id = ${r.threadId} AND parent_id IS NULL) AND team_id = ${r.teamId} AND expires_at IS NOT NULL)`
    : sql``;
  await db.execute(sql`
    WITH j AS (${job}) ${held}
    INSERT INTO agent_runs (id, root_id, parent_id, thread_id, thread_turn, name)
    SELECT id, ${r.rootId}, ${r.parentId ?? null}, ${r.threadId}, ${r.threadTurn ?? 1}, ${r.name ?? 'orchestrator'} FROM j`);
}

export async function loadAgentRun(db: Db, id: string): Promise<AgentRun | null> {
  return (await selectAgentRuns(db, eq(agentRuns.id, id)))[0] ?? null;
}

const rootJobs = alias(jobs, 'root_jobs');

/**
 * A run, its job's (root's) row and its team's credit limit (null = none) in one statement of
 * primary-key lookups: what every agent activity reads first. Null when the run (or its root) is missing.
 */
export async function loadAgentRunWithJob(db: Db, id: string): Promise<{ run: AgentRun; root: AgentRoot; creditLimit: number | null } | null> {
  const [row] = await db
    .select({ a: agentRuns, j: jobs, root: rootJobs, creditLimit: teamLimits.creditLimit })
    .from(agentRuns)
    .innerJoin(jobs, eq(jobs.id, agentRuns.id))
    .innerJoin(rootJobs, eq(rootJobs.id, agentRuns.rootId))
    .leftJoin(teamLimits, eq(teamLimits.teamId, jobs.teamId))
    .where(eq(agentRuns.id, id));
  return row ? { run: runOf(row), root: rootOf(row.root), creditLimit: row.creditLimit ?? null } : null;
}

/** A team's agent job (roots only: sub-agents are not jobs a client started). */
export async function loadTeamAgent(db: Db, teamId: string, id: string): Promise<AgentRun | null> {
  return (await selectAgentRuns(db, and(eq(agentRuns.id, id), eq(jobs.teamId, teamId), eq(jobs.kind, 'agent'), isNull(agentRuns.parentId))))[0] ?? null;
}

/** The next turn of a team's thread: null when the thread is unknown (or another team's); `busy` when its last turn still runs. */
export async function nextThreadTurn(db: Db, teamId: string, threadId: string): Promise<{ turn: number; busy: boolean } | null> {
  const r = await db.execute<{ turn: number; busy: boolean }>(sql`
    SELECT max(a.thread_turn)::int AS turn, bool_or(j.status IN ('queued', 'running', 'cancelling')) AS busy
    FROM agent_runs a JOIN jobs j ON j.id = a.id WHERE a.thread_id = ${threadId} AND j.team_id = ${teamId} AND a.parent_id IS NULL`);
  const row = r.rows[0];
  if (!row || row.turn === null) return null;
  return { turn: row.turn + 1, busy: !!row.busy };
}

/** The earlier turns of a thread (oldest first): what a follow-up turn is told happened. */
export async function threadHistory(db: Db, threadId: string, beforeTurn: number): Promise<AgentRun[]> {
  return selectAgentRuns(db, and(eq(agentRuns.threadId, threadId), isNull(agentRuns.parentId), sql`${agentRuns.threadTurn} < ${beforeTurn}`), [asc(agentRuns.threadTurn)]);
}

export type CancelRequest = { outcome: 'cancelling' } | { outcome: 'already_cancelling' } | { outcome: 'finished'; state: string };

/**
 * Records a cancel request at once: running → cancelling (the workflow then stops at its next
 * clean point and writes the end). Atomic, so two concurrent requests get one 200 and one 409.
 */
export async function requestAgentCancel(db: Db, id: string): Promise<CancelRequest> {
  const changed = await db.update(jobs).set({ status: 'cancelling' }).where(and(eq(jobs.id, id), eq(jobs.kind, 'agent'), eq(jobs.status, 'running'))).returning({ id: jobs.id });
  if (changed.length) return { outcome: 'cancelling' };
  const row = await loadAgentRun(db, id);
  if (row?.state === 'cancelling') return { outcome: 'already_cancelling' };
  return { outcome: 'finished', state: row?.state ?? 'missing' };
}

/** Sub-agents a run spawned, oldest first. */
export async function subagentsOf(db: Db, parentId: string): Promise<AgentRun[]> {
  return selectAgentRuns(db, eq(agentRuns.parentId, parentId), [asc(jobs.createdAt)]);
}

export async function noteAgentStep(db: Db, runId: string, step: number): Promise<void> {
  await db.update(agentRuns).set({ steps: sql`greatest(${agentRuns.steps}, ${step})` }).where(eq(agentRuns.id, runId));
}

export interface AgentEnd {
  state: AgentEndState;
  error?: string | null;
  data?: unknown;
  message?: string | null;
  creditsUsed: number;
}

/** A run's end as its job's error: the message served, with the spec's error code (the trace's `error.code`). */
const failureOf = (state: AgentEndState, message: string) => ({ kind: 'AGENT', code: state, message });

/**
 * Writes a run's end once, in one statement: its job row (status and outcome from the state) and
 * its data and message. Only a live job changes, so the first writer wins and a retry is a no-op;
 * returns whether this call wrote it. A root is a turn of its thread: its end sets every turn of the
 * thread to expire 24 hours from now (the thread goes whole; none is held any more unless another
 * turn runs). A sub-agent keeps no expiry of its own: it goes with its root.
 */
export async function finishAgentRunRow(db: Db, id: string, end: AgentEnd & { root: boolean }): Promise<boolean> {
  const keptMs = end.root ? agentJob.resultsKeptMs : null;
  const job = endJobSql(id, {
    ...agentJobEnd(end.state), error: end.error ? failureOf(end.state, end.error) : null, creditsUsed: end.creditsUsed, keptMs,
  });
  const data = end.data === undefined ? sql`NULL::jsonb` : sql`${JSON.stringify(storable(end.data))}::jsonb`;
  const r = await db.execute(sql`
    WITH j AS (${job}),
    a AS (UPDATE agent_runs SET data = ${data}, message = ${end.message ?? null} WHERE id IN (SELECT id FROM j) RETURNING id, thread_id, parent_id),
    thread AS (
      UPDATE jobs o SET expires_at = now() + make_interval(secs => ${(keptMs ?? 0) / 1000})
      FROM a, agent_runs t
      WHERE a.parent_id IS NULL AND t.thread_id = a.thread_id AND t.parent_id IS NULL AND t.id <> a.id AND o.id = t.id
        AND NOT EXISTS (
          SELECT 1 FROM agent_runs lt JOIN jobs l ON l.id = lt.id
          WHERE lt.thread_id = a.thread_id AND lt.parent_id IS NULL AND lt.id <> a.id AND l.status IN ('queued', 'running', 'cancelling')))
    SELECT id FROM a`);
  return (r.rowCount ?? 0) > 0;
}

/**
 * A succeeded job's `credits_used` brought up to what its ledger charged (work its sub-agents
 * committed after the job's bill was made). Returns the credits added (0: it was up to date).
 */
export async function syncAgentJobBill(db: Pick<Db, 'execute'>, rootId: string): Promise<number> {
  const r = await db.execute<{ added: number }>(sql`
    WITH billed AS (SELECT coalesce(sum(amount), 0)::int AS n FROM credit_ledger WHERE job_id = ${rootId} AND entry = 'charge'),
    before AS (SELECT credits_used FROM jobs WHERE id = ${rootId})
    UPDATE jobs j SET credits_used = billed.n FROM billed, before
    WHERE j.id = ${rootId} AND j.status = 'completed' AND billed.n > j.credits_used
    RETURNING (billed.n - before.credits_used)::int AS added`);
  return r.rows[0]?.added ?? 0;
}

/** The team's credit limit (null = none): the cap every reservation is checked against. */
export async function teamCreditLimit(db: Db, teamId: string): Promise<number | null> {
  const [row] = await db.select({ limit: teamLimits.creditLimit }).from(teamLimits).where(eq(teamLimits.teamId, teamId));
  return row?.limit ?? null;
}

/** The runs among `ids` that have ended. */
export async function endedAgentRuns(db: Db, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db.select({ id: jobs.id }).from(jobs).where(and(inArray(jobs.id, ids), sql`${jobs.status} NOT IN ('queued', 'running', 'cancelling')`));
  return rows.map((x) => x.id);
}
