import { createHash } from 'node:crypto';
import { and, asc, eq, gte, inArray, isNull, notInArray, or, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Db } from './client';
import { agentMessages, agentRuns, agentSnapshots, teamLimits } from './schema/index';
import { EXPIRES_FROM_NOW } from './retention';
import { storable, storableText } from './text';

/**
 * Agent runs (schema/agents.ts): the job row and its sub-agents, the transcript the model reads,
 * artifact snapshots. Every write an activity makes is idempotent on a natural key (a message's
 * key, a snapshot's derived id, a state transition guarded by the current state), so a retried
 * activity rewrites nothing twice. Reads for the API take the team id (another team's job reads
 * as missing); agent-reads.ts holds the trace, list and thread reads.
 */

export type AgentRunRow = typeof agentRuns.$inferSelect;
export type AgentMessageRow = typeof agentMessages.$inferSelect;

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
  parentId?: string | null;
  threadId: string;
  threadTurn?: number;
  name?: string;
  options: unknown;
}

/** Inserts a run (a retried insert of the same id is a no-op: a sub-agent's id is derived from its spawning call). */
export async function insertAgentRun(db: Db, r: NewAgentRun): Promise<void> {
  await db
    .insert(agentRuns)
    .values({ id: r.id, teamId: r.teamId, rootId: r.rootId, parentId: r.parentId ?? null, threadId: r.threadId, threadTurn: r.threadTurn ?? 1, name: r.name ?? 'orchestrator', options: r.options })
    .onConflictDoNothing();
}

export async function loadAgentRun(db: Db, id: string): Promise<AgentRunRow | null> {
  const [row] = await db.select().from(agentRuns).where(eq(agentRuns.id, id));
  return row ?? null;
}

const rootRuns = alias(agentRuns, 'root_runs');

/**
 * A run, its job's (root) row and its team's credit limit (null = none) in one query: what every
 * agent activity reads first (one round trip instead of up to three per activity). Null when
 * the run (or its root) is missing.
 */
export async function loadAgentRunWithJob(db: Db, id: string): Promise<{ run: AgentRunRow; root: AgentRunRow; creditLimit: number | null } | null> {
  const [row] = await db
    .select({ run: agentRuns, root: rootRuns, creditLimit: teamLimits.creditLimit })
    .from(agentRuns)
    .innerJoin(rootRuns, eq(rootRuns.id, agentRuns.rootId))
    .leftJoin(teamLimits, eq(teamLimits.teamId, agentRuns.teamId))
    .where(eq(agentRuns.id, id));
  return row ? { run: row.run, root: row.root, creditLimit: row.creditLimit ?? null } : null;
}

/** A team's agent job (roots only: sub-agents are not jobs of their own). */
export async function loadTeamAgent(db: Db, teamId: string, id: string): Promise<AgentRunRow | null> {
  const [row] = await db.select().from(agentRuns).where(and(eq(agentRuns.id, id), eq(agentRuns.teamId, teamId), isNull(agentRuns.parentId)));
  return row ?? null;
}

/** The next turn of a team's thread: null when the thread is unknown (or another team's); `busy` when its last turn still runs. */
export async function nextThreadTurn(db: Db, teamId: string, threadId: string): Promise<{ turn: number; busy: boolean } | null> {
  const r = await db.execute<{ turn: number; busy: boolean }>(sql`
    SELECT max(thread_turn)::int AS turn, bool_or(state IN ('running', 'cancelling')) AS busy
    FROM agent_runs WHERE thread_id = ${threadId} AND team_id = ${teamId} AND parent_id IS NULL`);
  const row = r.rows[0];
  if (!row || row.turn === null) return null;
  return { turn: row.turn + 1, busy: !!row.busy };
}

/** The earlier turns of a thread (oldest first): what a follow-up turn is told happened. */
export async function threadHistory(db: Db, threadId: string, beforeTurn: number): Promise<AgentRunRow[]> {
  return db
    .select()
    .from(agentRuns)
    .where(and(eq(agentRuns.threadId, threadId), isNull(agentRuns.parentId), sql`${agentRuns.threadTurn} < ${beforeTurn}`))
    .orderBy(asc(agentRuns.threadTurn));
}

export type CancelRequest = { outcome: 'cancelling' } | { outcome: 'already_cancelling' } | { outcome: 'finished'; state: string };

/**
 * Records a cancel request at once: running → cancelling (the workflow then stops at its next
 * clean point and writes the final state). Atomic, so two concurrent requests get one 200 and one 409.
 */
export async function requestAgentCancel(db: Db, id: string): Promise<CancelRequest> {
  const changed = await db.update(agentRuns).set({ state: 'cancelling' }).where(and(eq(agentRuns.id, id), eq(agentRuns.state, 'running'))).returning({ id: agentRuns.id });
  if (changed.length) return { outcome: 'cancelling' };
  const row = await loadAgentRun(db, id);
  if (row?.state === 'cancelling') return { outcome: 'already_cancelling' };
  return { outcome: 'finished', state: row?.state ?? 'missing' };
}

export interface NewAgentMessage {
  runId: string;
  step: number;
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  key: string;
  toolCalls?: unknown;
  toolCallId?: string;
  result?: unknown;
  credits?: number;
  reservationKey?: string;
}

/** Appends a transcript item once per (run, key); returns the stored item (the first append's, on a replay). */
export async function appendAgentMessage(db: Db, m: NewAgentMessage): Promise<AgentMessageRow> {
  const [inserted] = await db
    .insert(agentMessages)
    .values({
      runId: m.runId,
      step: m.step,
      role: m.role,
      content: m.content === null ? null : storableText(m.content),
      key: m.key,
      toolCalls: m.toolCalls ?? null,
      toolCallId: m.toolCallId ?? null,
      result: m.result === undefined ? null : storable(m.result),
      credits: m.credits ?? 0,
      reservationKey: m.reservationKey ?? null,
    })
    .onConflictDoNothing()
    .returning();
  if (inserted) return inserted;
  const found = await findAgentMessage(db, m.runId, m.key);
  if (!found) throw new Error(`agent message ${m.key} of run ${m.runId} was neither appended nor found`);
  return found;
}

export async function findAgentMessage(db: Db, runId: string, key: string): Promise<AgentMessageRow | null> {
  const [row] = await db.select().from(agentMessages).where(and(eq(agentMessages.runId, runId), eq(agentMessages.key, key)));
  return row ?? null;
}

/** Several items of a run by key, in one query (those not stored are absent). */
export async function findAgentMessages(db: Db, runId: string, keys: string[]): Promise<AgentMessageRow[]> {
  return db.select().from(agentMessages).where(and(eq(agentMessages.runId, runId), inArray(agentMessages.key, keys)));
}

/**
 * The transcript a model step reads: the opening turns (step 0: system prompt, the user's
 * request) and every item from `fromStep` on, in order. Older steps are left out, so a long
 * run's step reads a bounded window rather than its whole history.
 */
export async function loadTranscript(db: Db, runId: string, fromStep: number): Promise<AgentMessageRow[]> {
  return db
    .select()
    .from(agentMessages)
    .where(and(eq(agentMessages.runId, runId), or(eq(agentMessages.step, 0), gte(agentMessages.step, fromStep))))
    .orderBy(asc(agentMessages.seq));
}

export interface NewSnapshot {
  jobId: string;
  runId: string;
  /** Names the version: the same key always gives the same snapshot id. */
  key: string;
  artifact: string;
  kind: 'json' | 'markdown' | 'html' | 'text' | 'screenshot';
  content: string;
  url?: string;
}

/**
 * Stores an artifact version (idempotent: its id derives from run and key) and returns its id
 * and how many other versions of the artifact the run had stored before it (0: this one is the
 * artifact's first, `init`). One statement: the count reads the table as it was before the insert,
 * and leaves out this version's own id, which a retried insert finds already stored. The job id
 * in the count's filter lets it use the (job, artifact) index.
 */
export async function insertAgentSnapshot(db: Db, s: NewSnapshot): Promise<{ id: string; priorVersions: number }> {
  const id = stableUuid('agent-snapshot', s.runId, s.key);
  const r = await db.execute<{ n: number }>(sql`
    WITH ins AS (
      INSERT INTO agent_snapshots (id, job_id, run_id, artifact, kind, content, url)
      VALUES (${id}, ${s.jobId}, ${s.runId}, ${s.artifact}, ${s.kind}, ${storableText(s.content)}, ${s.url ?? null})
      ON CONFLICT DO NOTHING
    )
    SELECT count(*)::int AS n FROM agent_snapshots WHERE job_id = ${s.jobId} AND artifact = ${s.artifact} AND run_id = ${s.runId} AND id <> ${id}`);
  return { id, priorVersions: r.rows[0]!.n };
}

/** A snapshot of a job (any of its agents), or null. */
export async function loadAgentSnapshot(db: Db, jobId: string, snapshotId: string) {
  const [row] = await db.select().from(agentSnapshots).where(and(eq(agentSnapshots.id, snapshotId), eq(agentSnapshots.jobId, jobId)));
  return row ?? null;
}

/** The newest version of an artifact a run wrote (e.g. its `result`), or null. */
export async function latestAgentArtifact(db: Db, runId: string, artifact: string) {
  const [row] = await db
    .select()
    .from(agentSnapshots)
    .where(and(eq(agentSnapshots.runId, runId), eq(agentSnapshots.artifact, artifact)))
    .orderBy(sql`${agentSnapshots.createdAt} DESC, ${agentSnapshots.id}`)
    .limit(1);
  return row ?? null;
}

/** Credits of the work a job (all its agents) has done so far: the live `creditsUsed` of a running job. */
export async function agentWorkCredits(db: Pick<Db, 'execute'>, rootId: string): Promise<number> {
  const r = await db.execute<{ n: string }>(sql`
    SELECT coalesce(sum(m.credits), 0) AS n FROM agent_messages m JOIN agent_runs r ON r.id = m.run_id WHERE r.root_id = ${rootId}`);
  return Number(r.rows[0]!.n);
}

/** The reservations of a job's finished work and what each item really cost: converted to charges when the job succeeds. */
export async function agentBillableItems(db: Db, rootId: string): Promise<{ reservationKey: string; credits: number }[]> {
  const r = await db.execute<{ reservation_key: string; credits: number }>(sql`
    SELECT m.reservation_key, m.credits FROM agent_messages m JOIN agent_runs r ON r.id = m.run_id
    WHERE r.root_id = ${rootId} AND m.reservation_key IS NOT NULL ORDER BY m.seq`);
  return r.rows.map((x) => ({ reservationKey: x.reservation_key, credits: x.credits }));
}

/** Live sub-agents of a run (the parent stops them when it finishes first). */
export async function runningSubagents(db: Db, parentId: string): Promise<string[]> {
  const r = await db.execute<{ id: string }>(sql`SELECT id FROM agent_runs WHERE parent_id = ${parentId} AND state IN ('running', 'cancelling') ORDER BY created_at`);
  return r.rows.map((x) => x.id);
}

export async function subagentsOf(db: Db, parentId: string): Promise<AgentRunRow[]> {
  return db.select().from(agentRuns).where(eq(agentRuns.parentId, parentId)).orderBy(asc(agentRuns.createdAt));
}

export async function noteAgentStep(db: Db, runId: string, step: number): Promise<void> {
  await db.update(agentRuns).set({ steps: sql`greatest(${agentRuns.steps}, ${step})` }).where(eq(agentRuns.id, runId));
}

export interface AgentEnd {
  state: string;
  error?: string | null;
  data?: unknown;
  message?: string | null;
  creditsUsed: number;
}

/**
 * Writes a run's end once: only a running (or cancelling) run changes, so the first writer wins
 * and a retry is a no-op. Returns whether this call wrote it. Results stay readable for 24 hours.
 */
export async function finishAgentRunRow(db: Db, id: string, end: AgentEnd): Promise<boolean> {
  const status = end.state === 'succeeded' ? 'completed' : 'failed';
  const r = await db
    .update(agentRuns)
    .set({
      state: end.state,
      status,
      error: end.error ?? null,
      data: end.data === undefined ? null : storable(end.data),
      message: end.message ?? null,
      creditsUsed: end.creditsUsed,
      finishedAt: sql`now()`,
      expiresAt: EXPIRES_FROM_NOW,
    })
    .where(and(eq(agentRuns.id, id), sql`${agentRuns.state} IN ('running', 'cancelling')`))
    .returning({ id: agentRuns.id });
  return r.length > 0;
}

/**
 * A succeeded job's `credits_used` brought up to what its ledger charged (work its sub-agents
 * committed after the job's bill was made). Returns the credits added (0: it was up to date).
 */
export async function syncAgentJobBill(db: Pick<Db, 'execute'>, rootId: string): Promise<number> {
  const r = await db.execute<{ added: number }>(sql`
    WITH billed AS (SELECT coalesce(sum(amount), 0)::int AS n FROM credit_ledger WHERE job_id = ${rootId} AND entry = 'charge'),
    before AS (SELECT credits_used FROM agent_runs WHERE id = ${rootId})
    UPDATE agent_runs r SET credits_used = billed.n FROM billed, before
    WHERE r.id = ${rootId} AND r.state = 'succeeded' AND billed.n > r.credits_used
    RETURNING (billed.n - before.credits_used)::int AS added`);
  return r.rows[0]?.added ?? 0;
}

/** The team's credit limit (null = none): the cap every reservation is checked against. */
export async function teamCreditLimit(db: Db, teamId: string): Promise<number | null> {
  const [row] = await db.select({ limit: teamLimits.creditLimit }).from(teamLimits).where(eq(teamLimits.teamId, teamId));
  return row?.limit ?? null;
}

/** The sub-agents among `ids` that have ended (any state but running / cancelling). */
export async function endedAgentRuns(db: Db, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const rows = await db.select({ id: agentRuns.id }).from(agentRuns).where(and(inArray(agentRuns.id, ids), notInArray(agentRuns.state, ['running', 'cancelling'])));
  return rows.map((x) => x.id);
}

/** The message of a run's accepted `finish` call, or null. */
export async function agentFinishMessage(db: Db, runId: string): Promise<string | null> {
  const r = await db.execute<{ message: string | null }>(sql`
    SELECT content AS message FROM agent_messages
    WHERE run_id = ${runId} AND role = 'tool' AND result->'outcome'->>'kind' = 'finish' AND (result->'outcome'->>'accepted') = 'true'
      AND (result->'summary'->>'hasMessage') = 'true'
    ORDER BY seq DESC LIMIT 1`);
  return r.rows[0]?.message ?? null;
}

/** Agent jobs (roots) still running or cancelling, created more than `minAgeMs` ago, oldest first: the stranded-run sweep's candidates. */
export async function liveAgentJobsOlderThan(db: Db, minAgeMs: number, limit: number): Promise<string[]> {
  const r = await db.execute<{ id: string }>(sql`
    SELECT id FROM agent_runs
    WHERE parent_id IS NULL AND state IN ('running', 'cancelling') AND created_at < now() - make_interval(secs => ${minAgeMs / 1000})
    ORDER BY created_at LIMIT ${limit}`);
  return r.rows.map((x) => x.id);
}
