import { and, asc, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from './client';
import { selectAgentRuns, type AgentRun } from './agents';
import { agentRuns, jobs } from './schema/index';

/**
 * What the agent endpoints read: a job's trace (the job_events of all its agents), the team's
 * runs newest first, a thread's turns. Team-scoped where a client names the resource.
 */

export interface AgentTraceRow {
  runId: string;
  parentId: string | null;
  name: string;
  seq: number;
  type: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}

/**
 * A job's trace events: every agent's events (numbered per agent: `seq` is that agent's
 * producerSequence), ordered by time, then agent, then sequence. At most `limit`.
 */
export async function agentTraceEvents(db: Db, rootId: string, limit = 50_000): Promise<AgentTraceRow[]> {
  const r = await db.execute<{ run_id: string; parent_id: string | null; name: string; seq: number; type: string; payload: Record<string, unknown>; created_at: Date | string }>(sql`
    SELECT e.job_id AS run_id, r.parent_id, r.name, e.seq, e.type, e.payload, e.created_at
    FROM agent_runs r JOIN job_events e ON e.job_id = r.id
    WHERE r.root_id = ${rootId}
    ORDER BY e.created_at, (r.parent_id IS NOT NULL), e.job_id, e.seq
    LIMIT ${limit}`);
  return r.rows.map((x) => ({ runId: x.run_id, parentId: x.parent_id, name: x.name, seq: x.seq, type: x.type, payload: x.payload, createdAt: new Date(x.created_at) }));
}

/**
 * A team's agent jobs created before `beforeMs` (epoch ms), newest first. The cursor has the
 * SDK's millisecond precision: jobs created in the same millisecond as a page's last one are
 * on the next page only if they sort before it by id (rare; documented in the agent README).
 */
export async function listTeamAgents(db: Db, teamId: string, beforeMs: number | null, limit: number): Promise<AgentRun[]> {
  const before = beforeMs === null ? undefined : sql`${jobs.createdAt} < to_timestamp(${beforeMs / 1000}::float8)`;
  // Roots are the jobs without a parent: the (team, kind, created) index serves the page.
  return selectAgentRuns(db, and(eq(jobs.teamId, teamId), eq(jobs.kind, 'agent'), isNull(jobs.parentId), before), [desc(jobs.createdAt), desc(jobs.id)], limit);
}

/** A team's thread: its turns (roots) oldest first; empty when unknown or another team's. */
export async function teamThreadRuns(db: Db, teamId: string, threadId: string): Promise<AgentRun[]> {
  return selectAgentRuns(db, and(eq(agentRuns.threadId, threadId), eq(jobs.teamId, teamId), isNull(agentRuns.parentId)), [asc(agentRuns.threadTurn)]);
}

/**
 * Exchange calls of an agent job (all its runs): catalog calls billed at a price (`call_tool`
 * results marked `catalogCall`), and their credits. Counts maxCalls and the status's summary.
 */
export async function agentCatalogCalls(db: Db, rootId: string): Promise<{ paidCalls: number; credits: number }> {
  const r = await db.execute<{ paid: number; credits: number }>(sql`
    SELECT count(*) FILTER (WHERE m.credits > 0)::int AS paid, coalesce(sum(m.credits), 0)::int AS credits
    FROM agent_messages m JOIN agent_runs r ON r.id = m.run_id
    WHERE r.root_id = ${rootId} AND m.role = 'tool' AND (m.result -> 'summary' ->> 'catalogCall') = 'true'`);
  return { paidCalls: r.rows[0]?.paid ?? 0, credits: r.rows[0]?.credits ?? 0 };
}

/** A provider an agent's `call_tool` did not call because the team has not accepted its data terms. */
export interface AgentSkippedProviderRow {
  runId: string;
  /** The run's orchestrator ended its turn on it (`onTermsRequired: "ask"`). */
  offered: boolean;
  skipped: Record<string, unknown> & { provider: string };
}

/**
 * Gated providers a job's agents wanted (`call_tool` results marked `skippedProvider`), oldest
 * first, one per provider: the status's `exchange.skippedProviders` and a terms offer's providers.
 */
export async function agentSkippedProviders(db: Db, rootId: string): Promise<AgentSkippedProviderRow[]> {
  const r = await db.execute<{ run_id: string; offered: boolean; skipped: AgentSkippedProviderRow['skipped'] }>(sql`
    SELECT (array_agg(m.run_id ORDER BY m.created_at))[1] AS run_id,
      bool_or((m.result -> 'outcome' ->> 'kind') = 'terms_required') AS offered,
      (array_agg(m.result -> 'summary' -> 'skippedProvider' ORDER BY m.created_at))[1] AS skipped
    FROM agent_messages m JOIN agent_runs r ON r.id = m.run_id
    WHERE r.root_id = ${rootId} AND m.role = 'tool' AND (m.result -> 'summary' -> 'skippedProvider') IS NOT NULL
    GROUP BY m.result -> 'summary' -> 'skippedProvider' ->> 'provider'
    ORDER BY min(m.created_at)`);
  return r.rows.map((x) => ({ runId: x.run_id, offered: !!x.offered, skipped: x.skipped }));
}
