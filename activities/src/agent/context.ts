import type { AgentRunOptions } from '@wds/contracts';
import { loadAgentRunWithJob, type AgentRoot, type AgentRun, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';

/** A run as every agent activity sees it: the run, its job's (root's) row, and both option sets. */
export interface RunContext {
  run: AgentRun;
  root: AgentRoot;
  options: AgentRunOptions;
  /** The job's options: maxCredits, the webhook, the URL bounds apply to all its agents. */
  rootOptions: AgentRunOptions;
  isRoot: boolean;
  /**
   * The team's credit limit (null = none) as the activity found it when it started: every
   * reservation the activity makes is checked against it (read with the run, in one query).
   */
  teamCap: number | null;
}

export async function loadRunContext(db: Db, runId: string): Promise<RunContext> {
  const found = await loadAgentRunWithJob(db, runId);
  if (!found) throw new WdsError('NOT_FOUND', { message: `Agent run ${runId} (or its job) not found` });
  const { run, root } = found;
  return { run, root, options: run.options as AgentRunOptions, rootOptions: root.options as AgentRunOptions, isRoot: run.rootId === run.id, teamCap: found.creditLimit };
}

/**
 * Whether the run may still do work: it runs, and so does its job (a cancelled job stops its
 * sub-agents' steps too). Checked before every reservation, so nothing is reserved once the
 * end has been decided.
 */
export function isActive(c: RunContext): boolean {
  return c.run.state === 'running' && (c.isRoot || c.root.state === 'running');
}

/** The trace identity of a run (SDK: AgentTraceAgentIdentity). */
export function agentIdentity(run: Pick<AgentRun, 'id' | 'parentId' | 'name'>) {
  return { id: run.id, role: run.parentId ? ('subagent' as const) : ('orchestrator' as const), name: run.name, ...(run.parentId ? { parentId: run.parentId } : {}) };
}
