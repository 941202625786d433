import { WdsError } from '@wds/errors';
import { LlmCodes } from './errors';
import { modelLimits, type ModelLimits } from './models';

/**
 * The provider settings, from Firecrawl's self-host variable names so its users migrate
 * unchanged. Apps read them in their env.ts and pass them here; this package never reads env.
 */
export interface LlmEnv {
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  MODEL_NAME?: string;
  MODEL_EMBEDDING_NAME?: string;
  OLLAMA_BASE_URL?: string;
}

/** WDS's own knobs (optional; every one has a default). */
export interface LlmSettings {
  /** Context window of MODEL_NAME in tokens (default: known size of OpenAI models, else 32,768). */
  contextWindowTokens?: number;
  /** Most output tokens MODEL_NAME can produce (default: known size, else 4,096). */
  maxOutputTokens?: number;
  /** Per-request timeout in ms (default 120,000); keep it below the activity's start-to-close timeout. */
  requestTimeoutMs?: number;
  /** false when the model is known to reject `response_format: json_schema` (saves one failed request). */
  jsonSchema?: boolean;
  /** false when the model is known to reject `response_format: json_object`. */
  jsonObject?: boolean;
}

export type ProviderKind = 'openai' | 'openai-compatible' | 'ollama';

export interface LlmConfig {
  provider: ProviderKind;
  /** Ends in /v1 for OpenAI and Ollama; as given for other compatible servers. */
  baseUrl: string;
  /** Undefined for servers that need none (Ollama, a local vLLM). Never log it. */
  apiKey?: string;
  model: string;
  embeddingModel?: string;
  limits: ModelLimits;
  requestTimeoutMs: number;
  capabilities: { jsonSchema?: boolean; jsonObject?: boolean };
}

export type LlmConfigResult =
  | { ok: true; config: LlmConfig }
  | { ok: false; variable: keyof LlmEnv; message: string };

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';
export const DEFAULT_OPENAI_EMBEDDING_MODEL = 'text-embedding-3-small';
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

/**
 * Rules (README "Configuration"):
 * - `OLLAMA_BASE_URL` selects Ollama (Firecrawl's `http://host:11434/api` form works: we talk to
 *   Ollama's OpenAI-compatible `/v1` beside it); `MODEL_NAME` is then required.
 * - else `OPENAI_API_KEY` and/or `OPENAI_BASE_URL` select an OpenAI-compatible server; against
 *   OpenAI itself the key is required and `MODEL_NAME` defaults to gpt-4o-mini, against any other
 *   server the key is optional and `MODEL_NAME` is required (we cannot guess its model names).
 * - else LLM features are not configured; the result names the variable to set.
 */
export function resolveLlmConfig(env: LlmEnv, settings: LlmSettings = {}): LlmConfigResult {
  const v = (k: keyof LlmEnv) => {
    const s = env[k]?.trim();
    return s ? s : undefined;
  };
  const key = v('OPENAI_API_KEY');
  const model = v('MODEL_NAME');
  const embeddingModel = v('MODEL_EMBEDDING_NAME');
  const build = (provider: ProviderKind, baseUrl: string, m: string, emb: string | undefined, apiKey?: string): LlmConfigResult => ({
    ok: true,
    config: {
      provider,
      baseUrl,
      apiKey,
      model: m,
      embeddingModel: emb,
      limits: modelLimits(m, { contextWindow: settings.contextWindowTokens, maxOutput: settings.maxOutputTokens }),
      requestTimeoutMs: settings.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      capabilities: { jsonSchema: settings.jsonSchema, jsonObject: settings.jsonObject },
    },
  });

  const ollama = v('OLLAMA_BASE_URL');
  if (ollama) {
    const base = httpUrl(ollama);
    if (!base) return { ok: false, variable: 'OLLAMA_BASE_URL', message: 'OLLAMA_BASE_URL must be an http(s) URL, e.g. http://localhost:11434' };
    if (!model) return { ok: false, variable: 'MODEL_NAME', message: 'OLLAMA_BASE_URL is set: set MODEL_NAME to the Ollama model to use (e.g. llama3.1)' };
    return build('ollama', `${base.replace(/\/(api|v1)$/, '')}/v1`, model, embeddingModel, key);
  }

  const baseRaw = v('OPENAI_BASE_URL');
  if (key || baseRaw) {
    const base = baseRaw ? httpUrl(baseRaw) : OPENAI_BASE_URL;
    if (!base) return { ok: false, variable: 'OPENAI_BASE_URL', message: 'OPENAI_BASE_URL must be an http(s) URL, e.g. http://localhost:8000/v1' };
    const official = new URL(base).hostname === 'api.openai.com';
    if (official) {
      if (!key) return { ok: false, variable: 'OPENAI_API_KEY', message: 'OPENAI_BASE_URL points at OpenAI: set OPENAI_API_KEY' };
      return build('openai', base, model ?? DEFAULT_OPENAI_MODEL, embeddingModel ?? DEFAULT_OPENAI_EMBEDDING_MODEL, key);
    }
    if (!model) return { ok: false, variable: 'MODEL_NAME', message: `OPENAI_BASE_URL is set: set MODEL_NAME to a model that server serves` };
    return build('openai-compatible', base, model, embeddingModel, key);
  }

  return {
    ok: false,
    variable: 'OPENAI_API_KEY',
    message:
      'LLM features are not configured: set OPENAI_API_KEY (with OPENAI_BASE_URL and MODEL_NAME for another OpenAI-compatible server), or OLLAMA_BASE_URL with MODEL_NAME',
  };
}

/** The 400 the API answers for an LLM feature without configuration (as every unbuilt feature answers today). */
export function notConfiguredError(result: { variable: string; message: string }): WdsError {
  return new WdsError('FEATURE_NOT_AVAILABLE', { message: result.message, code: LlmCodes.NOT_CONFIGURED, details: { variable: result.variable } });
}

function httpUrl(s: string): string | undefined {
  try {
    const u = new URL(s);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    return u.toString().replace(/\/+$/, '');
  } catch {
    return undefined;
  }
}
