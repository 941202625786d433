import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { LlmCodes, LlmError, redactSecrets } from './errors';

/**
 * Provider failures → LlmError, decided once here:
 * - retryable: 429 (with the provider's delay), 408, 409, 5xx, timeouts, connection failures,
 *   unreadable replies — the next attempt may succeed;
 * - not retryable: other 4xx (bad key, unknown model, bad parameters, context too long),
 *   429 `insufficient_quota` (billing, not load) — the same request will fail again.
 * A 400 naming `response_format` or an unsupported `max_tokens` carries `details.param` (and
 * `details.unsupported` when the parameter itself, not its value, was refused) so callers can fall back.
 * An abort by the caller's signal rethrows the signal's reason untouched.
 */
export interface ClassifyContext {
  signal?: AbortSignal;
  secrets: Array<string | undefined>;
  model: string;
  baseUrl: string;
}

export function classifyProviderError(e: unknown, ctx: ClassifyContext): LlmError {
  if (ctx.signal?.aborted) throw ctx.signal.reason ?? e;
  if (e instanceof LlmError) return e;
  if (e instanceof APIConnectionTimeoutError) {
    return new LlmError('GATEWAY_TIMEOUT', LlmCodes.TIMEOUT, { message: 'The model provider did not answer in time', retryable: true, cause: e });
  }
  if (e instanceof APIUserAbortError) throw e;
  if (e instanceof APIConnectionError) {
    const why = redactSecrets(describeCause(e), ctx.secrets);
    return new LlmError('SERVICE_UNAVAILABLE', LlmCodes.CONNECTION_FAILED, {
      message: `Could not reach the model provider${why ? `: ${why}` : ''}`,
      retryable: true,
      cause: e,
    });
  }
  if (e instanceof APIError && typeof e.status === 'number') return fromStatus(e, ctx);
  // The SDK could not read the reply (HTML from a proxy, truncated JSON): transient more often than not.
  return new LlmError('BAD_GATEWAY', LlmCodes.BAD_RESPONSE, {
    message: `The model provider sent an unusable reply: ${redactSecrets(e instanceof Error ? e.message : String(e), ctx.secrets)}`,
    retryable: true,
    cause: e,
  });
}

function fromStatus(e: APIError, ctx: ClassifyContext): LlmError {
  const status = e.status as number;
  const body = (e.error ?? {}) as { message?: string; code?: string | null; param?: string | null; type?: string };
  const providerMessage = redactSecrets(String(body.message ?? e.message ?? ''), ctx.secrets).slice(0, 500);
  const details = { providerStatus: status, providerMessage, ...(body.code ? { providerCode: body.code } : {}) };
  const common = { providerStatus: status, cause: e };

  if (status === 429) {
    if (body.code === 'insufficient_quota' || body.type === 'insufficient_quota') {
      return new LlmError('BAD_GATEWAY', LlmCodes.PROVIDER_REJECTED, { ...common, message: 'The model provider account has no quota left', retryable: false, details });
    }
    return new LlmError('SERVICE_UNAVAILABLE', LlmCodes.RATE_LIMITED, {
      ...common,
      message: 'The model provider is rate limiting requests',
      retryable: true,
      retryAfterMs: retryAfterMs(e.headers),
      details,
    });
  }
  if (status >= 500 || status === 408 || status === 409) {
    return new LlmError('BAD_GATEWAY', LlmCodes.PROVIDER_ERROR, {
      ...common,
      message: `The model provider failed (HTTP ${status})`,
      retryable: true,
      retryAfterMs: retryAfterMs(e.headers),
      details,
    });
  }
  if (status === 401 || status === 403) {
    return new LlmError('BAD_GATEWAY', LlmCodes.PROVIDER_REJECTED, {
      ...common,
      message: `The model provider refused the credentials (HTTP ${status}); check OPENAI_API_KEY`,
      retryable: false,
      details,
    });
  }
  if (status === 404) {
    return new LlmError('BAD_GATEWAY', LlmCodes.PROVIDER_REJECTED, {
      ...common,
      message: `The model provider does not know model "${ctx.model}" or the endpoint ${ctx.baseUrl}; check MODEL_NAME and OPENAI_BASE_URL`,
      retryable: false,
      details,
    });
  }
  const text = `${providerMessage} ${body.param ?? ''}`;
  if (body.code === 'context_length_exceeded' || /maximum context length|context[_ ]length|too many tokens|prompt is too long|exceeds the available context size/i.test(text)) {
    return new LlmError('BAD_GATEWAY', LlmCodes.CONTEXT_EXCEEDED, {
      ...common,
      message: "The prompt exceeded the model's context window; set the context size of MODEL_NAME to the model's real one",
      retryable: false,
      details: { ...details, ...contextCounts(providerMessage) },
    });
  }
  // A parameter the model or server does not take (vs. a value it dislikes, e.g. a schema it cannot compile).
  const unsupported = /not supported|unsupported|does not support|not available|unknown|unrecognized|not permitted|extra (inputs|fields)|must be one of|must be '/i.test(text);
  const mentions = (re: RegExp) => body.param !== undefined && body.param !== null ? re.test(body.param) : re.test(providerMessage);
  const param = mentions(/response_format|json_schema|json_object|structured output/i)
    ? 'response_format'
    : unsupported && mentions(/max_tokens|max_completion_tokens/)
      ? 'max_tokens'
      : undefined;
  return new LlmError('BAD_GATEWAY', LlmCodes.PROVIDER_REJECTED, {
    ...common,
    message: `The model provider rejected the request (HTTP ${status}): ${providerMessage}`,
    retryable: false,
    details: param ? { ...details, param, unsupported } : details,
  });
}

/** `retry-after-ms` (OpenAI) first, then `retry-after` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const ra = headers.get('retry-after');
  if (!ra) return undefined;
  const secs = Number(ra.trim());
  if (Number.isFinite(secs) && secs >= 0) return Math.ceil(secs * 1000);
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function describeCause(e: APIConnectionError): string {
  const c = (e as { cause?: { code?: string; message?: string; cause?: { code?: string } } }).cause;
  return c?.code ?? c?.cause?.code ?? c?.message ?? '';
}

/**
 * The token counts a context-overflow message states, by the server's own tokenizer: llama.cpp's
 * "request (4186 tokens) exceeds the available context size (4096 tokens)", OpenAI's and vLLM's
 * "maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens" /
 * "you requested 9000 tokens (8000 in the messages, 1000 in the completion)". `promptTokens` is the
 * messages' count; `requestedTokens` a total that includes the reply's reserve, when only that is said.
 */
export function contextCounts(message: string): { promptTokens?: number; requestedTokens?: number; contextTokens?: number } {
  const n = (re: RegExp) => {
    const m = re.exec(message);
    return m ? Number(m[1]) : undefined;
  };
  const llama = /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/.exec(message);
  if (llama) return { promptTokens: Number(llama[1]), contextTokens: Number(llama[2]) };
  const out = {
    contextTokens: n(/maximum context length is (\d+) tokens/i),
    promptTokens: n(/(\d+) (?:tokens )?in the messages/i) ?? n(/messages resulted in (\d+) tokens/i),
    requestedTokens: n(/you requested (\d+) tokens/i),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}
