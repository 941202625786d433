/**
 * The agent job's contract (POST /v2/agent): workflow input/result, the activities it calls and
 * the signal a sub-agent sends its parent. Ids, counters and the plan only: the prompt, the
 * transcript, tool results and pages live in Postgres (agent_runs, agent_messages,
 * agent_snapshots) and are loaded by the activities.
 */
import { defineSignal } from '@temporalio/workflow';

/** Sub-agents one job's orchestrator may spawn; sub-agents spawn none (one level keeps the tree and its bill legible). */
export const MAX_SUBAGENTS = 5;

/** How a run is bounded, decided by the API from its env; fixed for the job's life. */
export interface AgentPlan {
  /** Model steps one workflow run takes before it continues as new (keeps each run's history small). */
  stepsPerRun: number;
  /** Model steps in all; the last one may only call `finish`. */
  maxSteps: number;
}

/** Carried across continue-as-new: counters and sub-agent ids (at most MAX_SUBAGENTS). */
export interface AgentProgress {
  /** Model steps done. */
  step: number;
  /** Workflow runs before this one. */
  runs: number;
  /** `finish` calls whose data the schema rejected (one repair turn is allowed). */
  repairs: number;
  /** Sub-agents started by this run. */
  children: string[];
  /** Those known to have finished. */
  finished: string[];
}

export interface AgentWorkflowInput {
  runId: string;
  /** The job a client started; equal to runId except for sub-agents. Credits are reserved under it. */
  rootId: string;
  /** Set for a sub-agent: the run that spawned it (it is told when this one finishes). */
  parentId?: string;
  plan: AgentPlan;
  progress?: AgentProgress;
}

/** The run's final internal state (AGENT_STATES of @wds/contracts). */
export interface AgentWorkflowResult {
  state: string;
}

/** A sub-agent tells its parent it has finished (its result is in Postgres). */
export const subagentFinishedSignal = defineSignal<[{ id: string }]>('agentSubagentFinished');

/** One tool call of a model step: its id and tool name; its arguments stay in the transcript. */
export interface ToolCallRef {
  id: string;
  name: string;
}

export interface AgentStepInput {
  runId: string;
  step: number;
  /** The last step the plan allows: the model may only call `finish`. */
  final: boolean;
}

export type AgentStepResult =
  /** The model chose these tools (a reply without tool calls comes back as a `finish` call). */
  | { kind: 'calls'; calls: ToolCallRef[] }
  /** The step's reservation was refused: the job's maxCredits or the team's credits are used up. */
  | { kind: 'credit_limit' }
  /** The model refused the task. */
  | { kind: 'refused' }
  /** The run is being cancelled (or has ended): nothing was run. */
  | { kind: 'stopped' };

export interface AgentToolInput {
  runId: string;
  step: number;
  callId: string;
  name: string;
}

export type AgentToolResult =
  /** The result is in the transcript (and its trace events are written). */
  | { kind: 'done' }
  | { kind: 'credit_limit' }
  | { kind: 'stopped' }
  /** `finish`: accepted (the run succeeds) or its data was rejected by the schema (told to the model). */
  | { kind: 'finish'; accepted: boolean }
  | { kind: 'refused' }
  /** The page must be rendered by the browser (wds-browser) instead. */
  | { kind: 'needs_browser' }
  /** `spawn_subagent`: the sub-agent's row is written; the workflow starts it. */
  | { kind: 'spawned'; childId: string }
  /** `wait_subagents`: the workflow waits for these, then records their results. */
  | { kind: 'wait'; ids: string[] }
  /** `call_tool` in `onTermsRequired: "ask"` mode hit a provider whose data terms the team has not accepted: the turn ends with a terms offer. */
  | { kind: 'terms_required' };

export interface SubagentResultsInput extends AgentToolInput {
  ids: string[];
}

export interface FinishAgentInput {
  runId: string;
  /**
   * How the run ended as the workflow saw it. `cancelled` on a sub-agent whose own row was not
   * being cancelled becomes `parent_finished` (its parent stopped it).
   */
  state: 'succeeded' | 'cancelled' | 'credit_limit_reached' | 'refused' | 'internal';
  message?: string;
  /** For `internal`: whether retrying the job could help (the failure's own retryability). */
  retryable?: boolean;
}

/** wds-control: bookkeeping and the tools that need no outbound request. */
export interface AgentControlActivities {
  /** Seeds the transcript and writes run.started / agent.started; idempotent. Answers the run's state. */
  startAgentRun(input: { runId: string }): Promise<{ state: string }>;
  /** save_result, finish, refuse, spawn_subagent, wait_subagents. */
  agentControlTool(input: AgentToolInput): Promise<AgentToolResult>;
  agentSubagentResults(input: SubagentResultsInput): Promise<AgentToolResult>;
  /** Which of these sub-agents have ended (a lost signal is found again this way). */
  endedSubagents(input: { ids: string[] }): Promise<string[]>;
  /** Writes the end once: state, data, billing (charges on success, releases otherwise), terminal events. */
  finishAgent(input: FinishAgentInput): Promise<{ state: string }>;
}

/** wds-llm: model calls. */
export interface AgentLlmActivities {
  /** One model step: reserve its credits, call the model with the tools, store the assistant message. */
  agentStep(input: AgentStepInput): Promise<AgentStepResult>;
  /** `extract`: the model reads one stored page. */
  agentExtractTool(input: AgentToolInput): Promise<AgentToolResult>;
}

/** wds-fetch: search, map, scrape (HTTP engine). */
export interface AgentFetchActivities {
  agentFetchTool(input: AgentToolInput): Promise<AgentToolResult>;
}

/** wds-browser: scrape with the browser (actions, client-rendered pages). */
export interface AgentBrowserActivities {
  agentBrowserTool(input: AgentToolInput): Promise<AgentToolResult>;
}
