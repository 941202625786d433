import { AGENT_TOOL_NAMES } from './agent';

/**
 * Which of an agent job's results are served (issue 38, item 3). Failed runs are not billed
 * (spec: Limits, and Firecrawl's docs: "Failed runs are not billed … creditsUsed: 0", "no data is
 * returned"), so nothing a run produced is served unless the job succeeded, when it is billed:
 * not its data, not its snapshots, not what its trace and webhooks would carry of pages and of
 * the model's words (tool parameters and results, artifact paths, tool error messages). A job
 * still running might yet end unbilled, so it is served the same way: its trace shows the run's
 * shape (events, tools, call ids, outcomes, credits), not its content. The content comes with
 * the completed job, or never.
 */

/** Whether a job (its root run's state) is billed and so has its results served. */
export const agentResultsServed = (rootState: string): boolean => rootState === 'succeeded';

const KNOWN_TOOLS = new Set<string>(AGENT_TOOL_NAMES);
const toolNameOf = (n: unknown) => (typeof n === 'string' && KNOWN_TOOLS.has(n) ? n : 'unknown');

/** What a tool error says while the results are withheld (its message names pages, URLs, the model's input). */
const WITHHELD_TOOL_ERROR = 'the tool call failed (its details are served with the results of a completed job)';

type Payload = Record<string, unknown>;

/**
 * A trace event's payload as a job whose results are withheld shows it: the fields that carry
 * page content or the model's words are left out; ids, names of known tools, outcomes, error
 * codes, the system's own messages and credits stay (a page's artifact id, a hash of its URL, reads
 * `page`). Applies to the API's trace and the webhook.
 */
export function withheldAgentEvent(type: string, payload: Payload): Payload {
  const out: Payload = { ...payload };
  if ('toolName' in out) out.toolName = toolNameOf(out.toolName);
  switch (type) {
    case 'tool_call.started':
      delete out.parameters;
      break;
    case 'tool_call.finished':
      delete out.result;
      break;
    case 'artifact.updated': {
      const { path: _path, itemCount: _count, ...artifact } = (out.artifact ?? {}) as Payload;
      // A page's artifact id is a hash of its URL: it would confirm a guessed URL.
      if (typeof artifact.artifactId === 'string' && artifact.artifactId.startsWith('page-')) artifact.artifactId = 'page';
      out.artifact = artifact;
      break;
    }
  }
  const err = out.error as Payload | null | undefined;
  if (err && typeof err === 'object' && err.source === 'tool') out.error = { ...err, message: WITHHELD_TOOL_ERROR };
  return out;
}
