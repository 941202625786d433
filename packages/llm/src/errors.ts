import { WdsError, type ErrorKind } from '@wds/errors';
import { type Usage } from './usage';

/** Stable codes of everything that can go wrong in a model call; the kind gives the HTTP status. */
export const LlmCodes = {
  /** No provider configured (400 FEATURE_NOT_AVAILABLE naming the variable to set). */
  NOT_CONFIGURED: 'FEATURE_NOT_AVAILABLE',
  /** A call without what it needs (e.g. json with neither schema nor prompt); the API validates first. */
  BAD_INPUT: 'LLM_BAD_INPUT',
  /** The user's JSON Schema does not compile (422). */
  INVALID_SCHEMA: 'LLM_INVALID_SCHEMA',
  /** The model's output still failed the schema after one repair attempt (422). */
  CANNOT_CONFORM: 'LLM_CANNOT_CONFORM',
  /** The model stopped at its output-token limit (finish_reason `length`) where a cut answer is useless. */
  OUTPUT_LIMIT: 'LLM_OUTPUT_LIMIT',
  /** The model declined to answer (OpenAI's `refusal`). */
  REFUSED: 'LLM_REFUSED',
  /** Provider 429: retryable after `retryAfterMs` when it said so. */
  RATE_LIMITED: 'LLM_RATE_LIMITED',
  /** Provider 5xx (and 408/409): retryable. */
  PROVIDER_ERROR: 'LLM_PROVIDER_ERROR',
  /** No answer within the request timeout: retryable. */
  TIMEOUT: 'LLM_TIMEOUT',
  /** Connection refused/reset, DNS: retryable. */
  CONNECTION_FAILED: 'LLM_CONNECTION_FAILED',
  /** Provider 4xx other than 408/409/429 (bad key, unknown model, bad request): retrying cannot help. */
  PROVIDER_REJECTED: 'LLM_PROVIDER_REJECTED',
  /** The prompt did not fit the model's context although it was truncated to the configured size. */
  CONTEXT_EXCEEDED: 'LLM_CONTEXT_EXCEEDED',
  /** The provider answered something that is not a chat completion. */
  BAD_RESPONSE: 'LLM_BAD_RESPONSE',
} as const;
export type LlmCode = (typeof LlmCodes)[keyof typeof LlmCodes];

export interface LlmErrorInit {
  message: string;
  retryable?: boolean;
  /** How long the provider asked us to wait (Retry-After / retry-after-ms), for Temporal's nextRetryDelay. */
  retryAfterMs?: number;
  /** HTTP status the provider answered, when it answered. */
  providerStatus?: number;
  details?: unknown;
  /** Tokens already spent by the failed operation (repair attempts, fallbacks): billing and metrics need them. */
  usage?: Usage;
  cause?: unknown;
}

/**
 * A WdsError with the model-call specifics. The `kind` decides the HTTP status the API renders
 * and the default retryability; activities map `retryable`/`retryAfterMs` to ApplicationFailure
 * (`nonRetryable`, `nextRetryDelay`). The client itself never retries: Temporal does.
 */
export class LlmError extends WdsError {
  readonly retryAfterMs?: number;
  readonly providerStatus?: number;
  usage?: Usage;

  constructor(kind: ErrorKind, code: LlmCode, init: LlmErrorInit) {
    super(kind, { message: init.message, code, details: init.details, retryable: init.retryable, cause: init.cause });
    this.name = 'LlmError';
    this.retryAfterMs = init.retryAfterMs;
    this.providerStatus = init.providerStatus;
    this.usage = init.usage;
  }
}

export function isLlmError(e: unknown): e is LlmError {
  return e instanceof LlmError;
}

/** Masks anything that looks like a secret before a provider message reaches logs or users. */
export function redactSecrets(text: string, secrets: Array<string | undefined> = []): string {
  let out = text.replace(/\b(sk|rk|pk)-[A-Za-z0-9_\-*]{6,}/g, '$1-***');
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('***');
  return out;
}
