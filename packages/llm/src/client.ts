import OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { LlmConfig } from './config';
import { LlmCodes, LlmError } from './errors';
import { createContextFit } from './context-fit';
import type { ModelLimits } from './models';
import { classifyProviderError } from './provider-errors';
import { countMessageTokens, countTokens } from './tokens';
import type { Usage } from './usage';

/**
 * The one place that talks to the provider, through the official `openai` SDK (see README for
 * why). Retries are off (maxRetries 0): a failed call surfaces at once as a classified LlmError
 * and Temporal's retry policy decides — with the provider's Retry-After as nextRetryDelay.
 */

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';
export interface ChatMessage {
  role: ChatRole;
  content: string | null;
  /** Assistant turns that called tools. */
  toolCalls?: ToolCall[];
  /** Tool turns: the call answered. */
  toolCallId?: string;
}

export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}
export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean }
  | { type: 'json_object' }
  | { type: 'text' };

export interface ChatRequest {
  messages: ChatMessage[];
  responseFormat?: ResponseFormat;
  tools?: ToolSpec[];
  toolChoice?: ToolChoice;
  /** Output-token cap for this call (default: the model's limit). */
  maxOutputTokens?: number;
  temperature?: number;
  /** Stream the reply (SSE); `onDelta` sees each content piece — e.g. to heartbeat an activity. */
  stream?: boolean;
  onDelta?: (piece: string) => void;
  /** Aborting rethrows the signal's reason (so a Temporal cancellation propagates as itself). */
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Another model than the configured one (e.g. the agent's mapping of Firecrawl model names). */
  model?: string;
}

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, as the model produced it (may be invalid: callers validate). */
  arguments: string;
}

export interface ChatResult {
  content: string | null;
  refusal: string | null;
  toolCalls: ToolCall[];
  /** `stop`, `length` (output limit hit), `tool_calls`, `content_filter`, … */
  finishReason: string;
  usage: Usage;
  /** True when the provider sent no usage and it was counted locally. */
  usageEstimated: boolean;
  model: string;
  latencyMs: number;
}

export interface EmbedResult {
  vectors: number[][];
  usage: Usage;
}

export interface LlmClient {
  readonly config: LlmConfig;
  /**
   * The limits to build prompts with: the configured ones, narrowed by what the server has shown —
   * its tokenizer counting more tokens than ours for the same text (Llama, Qwen and SmolLM
   * tokenizers do, by 10–40% on some text), or its context being smaller than configured.
   */
  readonly limits: ModelLimits;
  /** What the model turned out to accept; starts from the configured flags, learns from rejections. */
  readonly capabilities: { jsonSchema?: boolean; jsonObject?: boolean };
  chat(req: ChatRequest): Promise<ChatResult>;
  embed(texts: string[], opts?: { signal?: AbortSignal }): Promise<EmbedResult>;
}

export interface ClientOptions {
  /** A fetch implementation (tests, proxies); default the global one. */
  fetch?: typeof fetch;
}

export function createLlmClient(config: LlmConfig, options: ClientOptions = {}): LlmClient {
  const sdk = new OpenAI({
    // The SDK insists on a key; servers that need none ignore this placeholder.
    apiKey: config.apiKey ?? 'not-needed',
    baseURL: config.baseUrl,
    maxRetries: 0,
    timeout: config.requestTimeoutMs,
    // Explicit values so the SDK does not read OPENAI_ORG_ID/… or OPENAI_LOG from the environment itself.
    organization: null,
    project: null,
    webhookSecret: null,
    adminAPIKey: null,
    logLevel: 'off',
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const secrets = [config.apiKey];
  const capabilities = { ...config.capabilities };
  const fit = createContextFit(config.limits);
  // OpenAI's newer models refuse `max_tokens`; many compatible servers know only `max_tokens`.
  let tokenParam: 'max_tokens' | 'max_completion_tokens' = config.provider === 'openai' ? 'max_completion_tokens' : 'max_tokens';

  async function chat(req: ChatRequest): Promise<ChatResult> {
    const model = req.model ?? config.model;
    const started = performance.now();
    // A named choice goes out as that one tool with 'required': the same constraint, in the form
    // every OpenAI-compatible server knows. llama.cpp's server ignores the named object (it falls
    // back to 'auto' with only a log line) and so do others; 'required' they enforce by grammar.
    const named = typeof req.toolChoice === 'object' ? req.toolChoice.name : undefined;
    const tools = named ? req.tools?.filter((t) => t.name === named) : req.tools;
    // So no named object is ever sent (a name not among the tools sends no tools at all).
    const toolChoice = named ? 'required' : (req.toolChoice as Exclude<typeof req.toolChoice, { name: string }>);
    const body = (): ChatCompletionCreateParamsBase => ({
      model,
      messages: req.messages.map(toSdkMessage),
      ...(req.maxOutputTokens !== undefined ? { [tokenParam]: req.maxOutputTokens } : {}),
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.responseFormat ? { response_format: toSdkFormat(req.responseFormat) } : {}),
      ...(tools?.length
        ? {
            tools: tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } })),
            ...(toolChoice ? { tool_choice: toolChoice } : {}),
          }
        : {}),
    });
    const requestOptions = { signal: req.signal, timeout: req.timeoutMs ?? config.requestTimeoutMs, maxRetries: 0 };

    const attempt = async (): Promise<Omit<ChatResult, 'latencyMs' | 'usage' | 'usageEstimated'> & { usage?: Usage }> => {
      if (req.stream) {
        const stream = await sdk.chat.completions.create({ ...body(), stream: true, stream_options: { include_usage: true } }, requestOptions);
        return readStream(stream, model, req.onDelta);
      }
      const res = await sdk.chat.completions.create({ ...body(), stream: false }, requestOptions);
      const choice = res.choices?.[0];
      if (!choice?.message) throw badResponse('the reply has no choices');
      return {
        content: choice.message.content ?? null,
        refusal: choice.message.refusal ?? null,
        toolCalls: (choice.message.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [])),
        finishReason: choice.finish_reason ?? 'stop',
        model: res.model ?? model,
        usage: res.usage ? toUsage(res.usage) : undefined,
      };
    };

    let raw;
    try {
      raw = await attempt();
    } catch (e) {
      const err = classifyProviderError(e, { signal: req.signal, secrets, model, baseUrl: config.baseUrl });
      // Negotiating the parameter's name is not a retry: the first request was never processed.
      if (err.details && (err.details as { param?: string }).param === 'max_tokens') {
        tokenParam = tokenParam === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
        try {
          raw = await attempt();
        } catch (e2) {
          throw classifyProviderError(e2, { signal: req.signal, secrets, model, baseUrl: config.baseUrl });
        }
      } else {
        if (err.code === LlmCodes.CONTEXT_EXCEEDED) fit.overflowed(req.messages, req.maxOutputTokens, err);
        const d = err.details as { param?: string; unsupported?: boolean } | undefined;
        // Learn only "this model does not take json_schema", not "this schema was refused".
        if (d?.param === 'response_format' && d.unsupported && req.responseFormat) {
          if (req.responseFormat.type === 'json_schema') capabilities.jsonSchema = false;
          if (req.responseFormat.type === 'json_object') capabilities.jsonObject = false;
        }
        throw err;
      }
    }
    // A server that enforced nothing may still call another tool: only the named one was offered.
    if (named) raw = { ...raw, toolCalls: raw.toolCalls.filter((c) => c.name === named) };
    const usageEstimated = !raw.usage;
    const usage = raw.usage ?? estimateUsage(req.messages, raw.content, raw.toolCalls);
    if (!usageEstimated) fit.served(req.messages, req.maxOutputTokens, usage.promptTokens);
    return { ...raw, usage, usageEstimated, latencyMs: performance.now() - started };
  }

  async function embed(texts: string[], opts: { signal?: AbortSignal } = {}): Promise<EmbedResult> {
    const model = config.embeddingModel;
    if (!model) {
      throw new LlmError('FEATURE_NOT_AVAILABLE', LlmCodes.NOT_CONFIGURED, {
        message: 'Embeddings are not configured: set MODEL_EMBEDDING_NAME',
        retryable: false,
        details: { variable: 'MODEL_EMBEDDING_NAME' },
      });
    }
    if (texts.length === 0) return { vectors: [], usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, calls: 0 } };
    try {
      const res = await sdk.embeddings.create({ model, input: texts }, { signal: opts.signal, timeout: config.requestTimeoutMs, maxRetries: 0 });
      const vectors = [...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
      const prompt = res.usage?.prompt_tokens ?? texts.reduce((n, t) => n + countTokens(t), 0);
      return { vectors, usage: { promptTokens: prompt, completionTokens: 0, totalTokens: res.usage?.total_tokens ?? prompt, calls: 1 } };
    } catch (e) {
      throw classifyProviderError(e, { signal: opts.signal, secrets, model, baseUrl: config.baseUrl });
    }
  }

  return {
    config,
    capabilities,
    get limits() {
      return fit.limits();
    },
    chat,
    embed,
  };
}

async function readStream(
  stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>,
  model: string,
  onDelta?: (piece: string) => void,
): Promise<Omit<ChatResult, 'latencyMs' | 'usage' | 'usageEstimated'> & { usage?: Usage }> {
  let content = '';
  let sawContent = false;
  let refusal: string | null = null;
  let finishReason = 'stop';
  let usage: Usage | undefined;
  let actualModel = model;
  const calls = new Map<number, ToolCall>();
  for await (const chunk of stream) {
    if (chunk.model) actualModel = chunk.model;
    if (chunk.usage) usage = toUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const d = choice.delta ?? {};
    if (typeof d.content === 'string' && d.content) {
      sawContent = true;
      content += d.content;
      onDelta?.(d.content);
    }
    if (typeof d.refusal === 'string') refusal = (refusal ?? '') + d.refusal;
    for (const tc of d.tool_calls ?? []) {
      const cur = calls.get(tc.index) ?? { id: '', name: '', arguments: '' };
      if (tc.id) cur.id = tc.id;
      if (tc.function?.name) cur.name += tc.function.name;
      if (tc.function?.arguments) cur.arguments += tc.function.arguments;
      calls.set(tc.index, cur);
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  return {
    content: sawContent ? content : null,
    refusal,
    toolCalls: [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c),
    finishReason,
    model: actualModel,
    usage,
  };
}

function toSdkMessage(m: ChatMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content ?? '' };
    case 'user':
      return { role: 'user', content: m.content ?? '' };
    case 'tool':
      return { role: 'tool', content: m.content ?? '', tool_call_id: m.toolCallId ?? '' };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls?.length ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) } : {}),
      };
  }
}

function toSdkFormat(f: ResponseFormat): NonNullable<ChatCompletionCreateParamsBase['response_format']> {
  if (f.type === 'json_schema') return { type: 'json_schema', json_schema: { name: f.name, schema: f.schema, strict: f.strict ?? false } };
  return { type: f.type };
}

function toUsage(u: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number }): Usage {
  const promptTokens = u.prompt_tokens ?? 0;
  const completionTokens = u.completion_tokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: u.total_tokens ?? promptTokens + completionTokens, calls: 1 };
}

/** Some compatible servers send no usage (or none when streaming): count with our tokenizer. */
function estimateUsage(messages: ChatMessage[], content: string | null, toolCalls: ToolCall[]): Usage {
  const promptTokens = countMessageTokens(messages);
  const completionTokens = countTokens(content ?? '') + toolCalls.reduce((n, c) => n + countTokens(c.name + c.arguments), 0);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, calls: 1 };
}

function badResponse(why: string): LlmError {
  return new LlmError('BAD_GATEWAY', LlmCodes.BAD_RESPONSE, { message: `The model provider sent an unusable reply: ${why}`, retryable: true });
}
