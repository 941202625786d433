import { sql } from 'drizzle-orm';
import type { Db } from './client';
import { insertJobSql } from './jobs/index';

/**
 * Sub-agent rows under a cap. A step's spawn calls run as parallel activities: a count read
 * before an insert let each of them see room (16 spawns in one step made 8 sub-agents with a cap
 * of 5), so the count and the insert run in one transaction under a lock on the parent: spawns
 * of one parent take turns, and each counts every row inserted before it.
 */

export interface NewSubagent {
  id: string;
  teamId: string;
  rootId: string;
  parentId: string;
  threadId: string;
  threadTurn: number;
  options: unknown;
}

export type SpawnOutcome =
  /** This call inserted the row (named `subagent-<n>`, n its place among the parent's). */
  | { kind: 'inserted'; name: string }
  /** The row was there already (a retried spawn: its id derives from the call): not counted again. */
  | { kind: 'exists' }
  /** The parent has `max` sub-agents: nothing was inserted. */
  | { kind: 'full'; count: number };

export async function insertSubagentRun(db: Db, s: NewSubagent, max: number): Promise<SpawnOutcome> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended('wds-agent-spawn:' || ${s.parentId}, 0))`);
    // After the lock: a new statement, a new snapshot, so every spawn that held it before is counted.
    const [row] = (
      await tx.execute<{ n: number; mine: boolean }>(sql`
        SELECT count(*)::int AS n, bool_or(id = ${s.id}) AS mine FROM agent_runs WHERE root_id = ${s.rootId} AND parent_id = ${s.parentId}`)
    ).rows;
    if (row?.mine) return { kind: 'exists' as const };
    const count = row?.n ?? 0;
    if (count >= max) return { kind: 'full' as const, count };
    const name = `subagent-${count + 1}`;
    // Its job goes with its root's (parent_id); no workflow id until its workflow runs (startAgentRun records it).
    const job = insertJobSql({ id: s.id, teamId: s.teamId, kind: 'agent', status: 'running', options: s.options, parentId: s.rootId });
    await tx.execute(sql`
      WITH j AS (${job})
      INSERT INTO agent_runs (id, root_id, parent_id, thread_id, thread_turn, name)
      SELECT id, ${s.rootId}, ${s.parentId}, ${s.threadId}, ${s.threadTurn}, ${name} FROM j`);
    return { kind: 'inserted' as const, name };
  });
}
