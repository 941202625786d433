import type { AgentPlan, AgentProgress, AgentToolResult, FinishAgentInput } from './contracts';

/**
 * The agent loop's decisions, pure (no Temporal): which queue serves a tool, when a run hands
 * over to a new one, and what a step's tool results mean for the run.
 */

export type ToolQueue = 'fetch' | 'llm' | 'control';

/** Tools that make outbound requests run on wds-fetch (browser renders go on to wds-browser); the model's on wds-llm. */
export function toolQueue(name: string): ToolQueue {
  if (name === 'search' || name === 'map' || name === 'scrape' || name === 'find_tools' || name === 'call_tool') return 'fetch';
  if (name === 'extract') return 'llm';
  return 'control';
}

/** Defaults the API may override from its env (WDS_AGENT_*). */
export const DEFAULT_AGENT_PLAN: AgentPlan = { stepsPerRun: 200, maxSteps: 1_000 };


export const newProgress = (): AgentProgress => ({ step: 0, runs: 0, repairs: 0, children: [], finished: [] });

/**
 * Hand over to a new run after `stepsPerRun` steps, or earlier when the server suggests it. A
 * step is ~12 history events (the model activity, one tool, their workflow tasks), so 200 steps
 * stay near 2,500 events, far below the 10,000 this job promises per run.
 */
export function shouldHandOver(stepsThisRun: number, plan: AgentPlan, suggested: boolean): boolean {
  return stepsThisRun >= plan.stepsPerRun || (stepsThisRun > 0 && suggested);
}

/** The closing message of a turn a terms offer ended (the model's own `finish` message wins when it gave one). */
export const TERMS_OFFER_MESSAGE = 'This turn ended to ask for the acceptance of third-party data terms: see pendingApproval. After the user has agreed, accept them (firecrawl/terms/accept) and continue the thread with exchange.approve, or decline.';

export type StepEnd = Pick<FinishAgentInput, 'state' | 'message' | 'retryable'> | null;

/** What one step's tool results mean: the run ends (and how), or it goes on. Mutates `progress.repairs`. */
export function afterStep(results: AgentToolResult[], progress: AgentProgress): StepEnd {
  if (results.some((r) => r.kind === 'stopped')) return { state: 'cancelled' };
  if (results.some((r) => r.kind === 'credit_limit')) return { state: 'credit_limit_reached' };
  if (results.some((r) => r.kind === 'refused')) return { state: 'refused' };
  const finish = results.find((r): r is Extract<AgentToolResult, { kind: 'finish' }> => r.kind === 'finish');
  if (finish?.accepted) return { state: 'succeeded' };
  // New kind (no committed history holds it), so no patch: the turn ends waiting for the user's acceptance of data terms.
  if (results.some((r) => r.kind === 'terms_required')) return { state: 'succeeded', message: TERMS_OFFER_MESSAGE };
  if (finish && ++progress.repairs > 1) {
    return { state: 'internal', retryable: false, message: 'The agent could not produce data matching the requested schema (its answer was rejected twice).' };
  }
  return null;
}
