import { and, asc, eq, gte, inArray, or, sql } from 'drizzle-orm';
import type { Db } from './client';
import { stableUuid } from './agents';
import { agentMessages, agentSnapshots } from './schema/index';
import { storable, storableText } from './text';

export type AgentMessageRow = typeof agentMessages.$inferSelect;

/**
 * What an agent run keeps besides its row (schema/agents.ts): the transcript the model reads (one
 * item per natural key, so a retried activity appends nothing twice, each with what it cost and the
 * reservation holding it) and artifact snapshots (ids derived from the writing call).
 */

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

/** The reservations of a job's finished work and what each item really cost: converted to charges when the job succeeds. */
export async function agentBillableItems(db: Db, rootId: string): Promise<{ reservationKey: string; credits: number }[]> {
  const r = await db.execute<{ reservation_key: string; credits: number }>(sql`
    SELECT m.reservation_key, m.credits FROM agent_messages m JOIN agent_runs r ON r.id = m.run_id
    WHERE r.root_id = ${rootId} AND m.reservation_key IS NOT NULL ORDER BY m.seq`);
  return r.rows.map((x) => ({ reservationKey: x.reservation_key, credits: x.credits }));
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
