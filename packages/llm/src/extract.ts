import type { ChatMessage, ChatResult, LlmClient, ResponseFormat } from './client';
import { retryRefitted } from './context-fit';
import { LlmCodes, LlmError, isLlmError } from './errors';
import { jsonPrompt, repairMessage, type BuiltPrompt, type JsonPromptMode, type PageInput } from './prompts';
import { parseJsonReply } from './reply-text';
import { compileUserSchema, type CompiledSchema } from './schema';
import { CONTEXT_MARGIN, countMessageTokens } from './tokens';
import { addUsage, emptyUsage, type Usage } from './usage';

/**
 * JSON in three rungs, best first: `response_format: json_schema` (the server constrains the
 * output), `json_object` (valid JSON, schema in the prompt), then plain prompt + parse. A rung is
 * skipped when the client knows (configured or learned) the model lacks it, and abandoned when
 * the provider answers that it does not take it. The output is validated with ajv; one repair
 * turn sends the validation errors back; then CANNOT_CONFORM.
 */

export interface CallOptions {
  signal?: AbortSignal;
  /** Stream replies; `onDelta` sees each piece (activities heartbeat from it). */
  stream?: boolean;
  onDelta?: (piece: string) => void;
}

export interface ExtractJsonInput extends CallOptions {
  page: PageInput;
  /** The user's JSON Schema (validated: an invalid one is an INVALID_SCHEMA error). */
  schema?: unknown;
  prompt?: string;
}

export interface ExtractJsonResult {
  data: unknown;
  usage: Usage;
  mode: JsonPromptMode;
  /** The first reply failed validation and the repair turn fixed it. */
  repaired: boolean;
  truncatedInput: boolean;
  warning?: string;
}

export async function extractJson(client: LlmClient, input: ExtractJsonInput): Promise<ExtractJsonResult> {
  if (input.schema === undefined && !input.prompt?.trim()) {
    throw new LlmError('BAD_REQUEST', LlmCodes.BAD_INPUT, { message: 'JSON extraction needs a schema or a prompt', retryable: false });
  }
  const compiled = input.schema !== undefined ? await compileUserSchema(input.schema) : undefined;
  let usage = emptyUsage();
  const spent = (r: ChatResult) => (usage = addUsage(usage, r.usage));

  const { result, mode, prompt } = await callWithLadder(client, {
    schema: compiled,
    build: (mode) => jsonPrompt({ page: input.page, prompt: input.prompt, schema: compiled?.providerSchema, mode, limits: client.limits }),
    options: input,
    onUsage: (u) => (usage = addUsage(usage, u)),
  });
  const truncatedInput = prompt.truncated;
  const warning = truncatedInput ? truncationWarning(prompt) : undefined;

  let check = await judge(result, compiled).catch((e: unknown) => Promise.reject(withUsage(e, usage)));
  if (check.ok) return { data: check.value, usage, mode, repaired: false, truncatedInput, warning };
  if (check.code !== LlmCodes.CANNOT_CONFORM) throw failure(check, usage);

  // One repair turn, same rung: the model sees its reply and what was wrong with it. Those two
  // turns take room the page had: the page is re-fitted so the whole request still fits.
  const reply = result.content ?? '';
  const fix = repairMessage(check.errors);
  const extra = countMessageTokens([{ content: reply }, { content: fix }]);
  const { limits } = client;
  const refit = jsonPrompt({
    page: input.page,
    prompt: input.prompt,
    schema: compiled?.providerSchema,
    mode,
    limits: { ...limits, contextWindow: Math.max(0, limits.contextWindow - Math.ceil(extra / (1 - CONTEXT_MARGIN))) },
  });
  const messages: ChatMessage[] = [...refit.messages, { role: 'assistant', content: reply }, { role: 'user', content: fix }];
  let repairedResult: ChatResult;
  try {
    repairedResult = await client.chat({ messages, responseFormat: responseFormatFor(mode, compiled), maxOutputTokens: prompt.maxOutputTokens, ...callOpts(input) });
  } catch (e) {
    throw withUsage(e, usage);
  }
  spent(repairedResult);
  check = await judge(repairedResult, compiled).catch((e: unknown) => Promise.reject(withUsage(e, usage)));
  if (check.ok) return { data: check.value, usage, mode, repaired: true, truncatedInput, warning };
  throw failure(check, usage);
}

type Failed = { ok: false; errors: string[]; code: typeof LlmCodes.CANNOT_CONFORM | typeof LlmCodes.OUTPUT_LIMIT | typeof LlmCodes.REFUSED };
type Judged = { ok: true; value: unknown } | Failed;

const FAILURE_MESSAGES: Record<Failed['code'], string> = {
  [LlmCodes.CANNOT_CONFORM]: 'The model could not produce output that conforms to the JSON Schema',
  [LlmCodes.OUTPUT_LIMIT]: "The model's output was cut at its output-token limit before the JSON was complete",
  [LlmCodes.REFUSED]: 'The model refused to extract the data',
};

function failure(f: Failed, usage: Usage): LlmError {
  return new LlmError('UNPROCESSABLE', f.code, { message: FAILURE_MESSAGES[f.code], retryable: false, details: { errors: f.errors }, usage });
}

async function judge(r: ChatResult, compiled: CompiledSchema | undefined): Promise<Judged> {
  if (r.refusal) return { ok: false, errors: [r.refusal.slice(0, 300)], code: LlmCodes.REFUSED };
  const parsed = parseJsonReply(r.content);
  if (!parsed.ok) {
    // A reply cut at the output limit is incomplete JSON: asking again for the same thing repeats it.
    if (r.finishReason === 'length') return { ok: false, errors: ['the reply was cut at the output-token limit'], code: LlmCodes.OUTPUT_LIMIT };
    return { ok: false, errors: [parsed.error], code: LlmCodes.CANNOT_CONFORM };
  }
  let value = parsed.value;
  if (compiled?.wrapped) {
    if (value && typeof value === 'object' && !Array.isArray(value) && 'result' in value) value = (value as { result: unknown }).result;
  }
  if (!compiled) return { ok: true, value };
  const v = await compiled.validate(value);
  return v.ok ? { ok: true, value } : { ok: false, errors: v.errors, code: LlmCodes.CANNOT_CONFORM };
}

/**
 * Runs `build(mode)` on the best rung the model takes. Used by JSON extraction and by the
 * prompt-injection verdict (any structured reply).
 */
export async function callWithLadder(
  client: LlmClient,
  opts: { schema?: ProviderSchema; build: (mode: JsonPromptMode) => BuiltPrompt; options: CallOptions; onUsage: (u: Usage) => void },
): Promise<{ result: ChatResult; mode: JsonPromptMode; prompt: BuiltPrompt }> {
  const caps = client.capabilities;
  const rungs: JsonPromptMode[] = [];
  if (opts.schema && caps.jsonSchema !== false) rungs.push('json_schema');
  if (caps.jsonObject !== false) rungs.push('json_object');
  rungs.push('prompt');
  let lastError: unknown;
  for (const mode of rungs) {
    let prompt!: BuiltPrompt;
    try {
      const result = await retryRefitted(() => {
        prompt = opts.build(mode);
        return client.chat({ messages: prompt.messages, responseFormat: responseFormatFor(mode, opts.schema), maxOutputTokens: prompt.maxOutputTokens, ...callOpts(opts.options) });
      });
      opts.onUsage(result.usage);
      return { result, mode, prompt };
    } catch (e) {
      // The rejected request cost nothing; a different error is not ours to handle.
      if (!(isLlmError(e) && (e.details as { param?: string } | undefined)?.param === 'response_format' && mode !== 'prompt')) throw e;
      lastError = e;
    }
  }
  throw lastError;
}

/** What the rungs need of a schema: the form the model is sent. */
type ProviderSchema = Pick<CompiledSchema, 'providerSchema'>;

function responseFormatFor(mode: JsonPromptMode, schema: ProviderSchema | undefined): ResponseFormat | undefined {
  if (mode === 'json_schema' && schema) return { type: 'json_schema', name: 'extraction', schema: schema.providerSchema };
  if (mode === 'json_object') return { type: 'json_object' };
  return undefined;
}

export function callOpts(o: CallOptions): Pick<CallOptions, 'signal' | 'stream' | 'onDelta'> {
  return { signal: o.signal, stream: o.stream, onDelta: o.onDelta };
}

export function truncationWarning(p: BuiltPrompt): string {
  return `The page was truncated to ${p.pageTokens} tokens to fit the model's context window; content after that was not read.`;
}

/** `e` with the tokens already spent added to its usage (a failure after a model call still bills them). */
export function withUsage(e: unknown, usage: Usage): unknown {
  if (isLlmError(e)) e.usage = addUsage(usage, e.usage);
  return e;
}
