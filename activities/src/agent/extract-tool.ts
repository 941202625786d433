import type { AgentToolArgsOf } from '@wds/contracts';
import { loadAgentSnapshot, type Db } from '@wds/db';
import { extractJson, isLlmError, LLM_CREDITS, type LlmClient } from '@wds/llm';
import type { AgentToolInput, AgentToolResult } from '@wds/workflows/agent';
import { runToolCall, ToolError, type Tool } from './tool-runner';

/**
 * wds-llm: `extract` reads one page this job stored (by the pageId its scrape returned) and
 * runs the `json` format over it (@wds/llm extractJson: schema or prompt, one repair turn).
 * Billed like the json format of a scrape: 4 credits. It runs on the deployment's model (MODEL_NAME).
 */
function extractTool(db: Db, client: LlmClient): Tool<AgentToolArgsOf<'extract'>> {
  return {
    estimate: () => LLM_CREDITS.JSON,
    async run(a, env) {
      const snap = await loadAgentSnapshot(db, env.ctx.root.id, a.pageId);
      if (!snap || snap.kind !== 'markdown') throw new ToolError(`no page with pageId ${a.pageId} was scraped in this task`);
      try {
        const r = await extractJson(client, { page: { markdown: snap.content, url: snap.url ?? undefined }, schema: a.schema, prompt: a.prompt, signal: env.signal });
        const text = JSON.stringify(r.data);
        return {
          content: text,
          result: { pageId: a.pageId, ...(snap.url ? { url: snap.url } : {}) },
          credits: LLM_CREDITS.JSON,
          artifacts: [{ artifact: `extract-${a.pageId.slice(0, 8)}`, kind: 'json', content: text, path: `/workspace/extracts/${a.pageId}.json` }],
        };
      } catch (e) {
        // The provider's transient failures are retried by Temporal; a page the model cannot conform is the agent's news.
        if (isLlmError(e) && !e.retryable) throw new ToolError(e.message);
        throw e;
      }
    },
  };
}

export function agentExtractTool(db: Db, client: LlmClient, input: AgentToolInput): Promise<AgentToolResult> {
  return runToolCall(db, input, 'extract', extractTool(db, client));
}
