import type { Db } from '@wds/db';
import type { LlmClient } from '@wds/llm';
import type { AgentBrowserActivities, AgentControlActivities, AgentFetchActivities, AgentLlmActivities } from '@wds/workflows/agent';
import { asActivity } from '../failures';
import { agentBrowserTool, type AgentBrowserDeps } from './browser-tool';
import { createAgentControl, type AgentControlDeps } from './control';
import { agentExtractTool } from './extract-tool';
import { agentFetchTool, type AgentFetchDeps } from './fetch-tools';
import { agentStep, type AgentStepDeps } from './step';

/**
 * The agent job's activities, one factory per task queue (workflows/src/agent/contracts.ts):
 * wds-control (bookkeeping, tools without outbound requests), wds-llm (model steps, extract),
 * wds-fetch (search, map, scrape), wds-browser (scrape with the browser).
 */
export function createAgentControlActivities(deps: AgentControlDeps): AgentControlActivities {
  const a = createAgentControl(deps);
  return {
    startAgentRun: (i) => asActivity(() => a.startAgentRun(i)),
    agentControlTool: (i) => asActivity(() => a.agentControlTool(i)),
    agentSubagentResults: (i) => asActivity(() => a.agentSubagentResults(i)),
    endedSubagents: (i) => asActivity(() => a.endedSubagents(i)),
    finishAgent: (i) => asActivity(() => a.finishAgent(i)),
  };
}

export function createAgentLlmActivities(deps: AgentStepDeps): AgentLlmActivities {
  return {
    agentStep: (i) => asActivity(() => agentStep(deps, i)),
    agentExtractTool: (i) => asActivity(() => agentExtractTool(deps.db, deps.client, i)),
  };
}

export function createAgentFetchActivities(deps: AgentFetchDeps): AgentFetchActivities {
  return { agentFetchTool: (i) => asActivity(() => agentFetchTool(deps, i)) };
}

export function createAgentBrowserActivities(deps: AgentBrowserDeps): AgentBrowserActivities {
  return { agentBrowserTool: (i) => asActivity(() => agentBrowserTool(deps, i)) };
}

export type { AgentControlDeps, AgentStepDeps, AgentFetchDeps, AgentBrowserDeps, Db, LlmClient };
