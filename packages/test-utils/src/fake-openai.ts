import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OpenAI-compatible model server for tests: real HTTP speaking Chat Completions
 * (`response_format` json_schema/json_object, `tools`/`tool_choice`, SSE streaming, usage),
 * `/v1/embeddings` and `/v1/models`. Point a client at `baseUrl` (e.g. as OPENAI_BASE_URL).
 *
 * Scripting: replies are taken from a queue (`enqueue`), else from a handler function, else a
 * default reply is made up from the request (a minimal object that satisfies the json_schema,
 * a call of the forced tool, or a short text). Models can be declared without json_schema /
 * json_object / tools support: such requests get the 400 OpenAI sends for them, before the
 * queue is consulted. Every request is logged; `inFlight`/`maxInFlight` count concurrent calls.
 */

export type FakeFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface FakeChatMessage {
  role: string;
  content?: string | Array<{ type: string; text?: string }> | null;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
}

export interface FakeChatRequest {
  model: string;
  messages: FakeChatMessage[];
  response_format?: { type: string; json_schema?: { name?: string; schema?: unknown; strict?: boolean } };
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: unknown } }>;
  tool_choice?: 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  [key: string]: unknown;
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

interface ReplyCommon {
  /** Wait this long before answering (on top of the server's `delayMs`). */
  delayMs?: number;
}

export type FakeReply =
  | (ReplyCommon & {
      /** An object is sent as its JSON text. */
      content: string | object;
      finishReason?: FakeFinishReason;
      usage?: Partial<FakeUsage>;
      refusal?: string;
    })
  | (ReplyCommon & {
      toolCalls: Array<{ name: string; arguments: unknown; id?: string }>;
      content?: string;
      usage?: Partial<FakeUsage>;
    })
  | (ReplyCommon & {
      error: { status: number; message?: string; type?: string; code?: string | null; param?: string | null };
      /** Sent as the `retry-after` header (seconds, or an HTTP date). */
      retryAfter?: number | string;
      /** Sent as the `retry-after-ms` header, as OpenAI does. */
      retryAfterMs?: number;
    })
  /** Close the connection without an answer (a connection reset as the client sees it). */
  | (ReplyCommon & { drop: true })
  /** Never answer (until the client gives up or the server closes). */
  | { hang: true };

export interface FakeModelSpec {
  id: string;
  /** `response_format: {type: "json_schema"}` accepted (default true). */
  jsonSchema?: boolean;
  /** `response_format: {type: "json_object"}` accepted (default true). */
  jsonObject?: boolean;
  /** `tools` accepted (default true). */
  tools?: boolean;
}

export interface FakeHandlerContext {
  /** 0-based number of this chat request since start (or the last reset). */
  index: number;
  model: Required<FakeModelSpec>;
}

export type FakeHandler = (req: FakeChatRequest, ctx: FakeHandlerContext) => FakeReply | undefined | Promise<FakeReply | undefined>;

export interface FakeOpenAIOptions {
  /** Declared models (listed by /v1/models); unknown models are accepted with every capability. */
  models?: Array<string | FakeModelSpec>;
  handler?: FakeHandler;
  /** Delay before every answer, ms. */
  delayMs?: number;
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401 as OpenAI answers). */
  apiKey?: string;
  /** Length of the made-up embedding vectors (default 8). */
  embeddingDimensions?: number;
  host?: string;
}

export interface FakeLoggedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** Parsed JSON body (raw text when it is not JSON). */
  body: unknown;
  at: number;
}

export interface FakeOpenAI {
  /** `http://127.0.0.1:<port>/v1`: the value for OPENAI_BASE_URL. */
  baseUrl: string;
  /** The provider settings of a stack that talks to this server (OPENAI_BASE_URL, OPENAI_API_KEY, MODEL_NAME). */
  env: { OPENAI_BASE_URL: string; OPENAI_API_KEY: string; MODEL_NAME: string };
  origin: string;
  enqueue(...replies: FakeReply[]): void;
  setHandler(handler: FakeHandler | undefined): void;
  /** Replies still queued. */
  pending(): number;
  requests: FakeLoggedRequest[];
  chatRequests(): FakeChatRequest[];
  lastChat(): FakeChatRequest | undefined;
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Clears the log, the queue and the counters (not the handler or models). */
  reset(): void;
  close(): Promise<void>;
}

/** Every text the model was shown (message contents and tool results), joined: for "the page reached the model" checks. */
export function promptText(req: FakeChatRequest): string {
  return req.messages
    .map((m) => (typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p) => p.text ?? '').join('') : ''))
    .join('\n');
}

/** The rough count OpenAI-compatible servers report when nothing better is known: 4 characters a token. */
const estimateTokens = (s: string) => Math.ceil(s.length / 4);

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const models = new Map<string, Required<FakeModelSpec>>();
  for (const m of options.models ?? ['fake-model']) {
    const spec = typeof m === 'string' ? { id: m } : m;
    models.set(spec.id, { jsonSchema: true, jsonObject: true, tools: true, ...spec });
  }
  const modelOf = (id: string): Required<FakeModelSpec> => models.get(id) ?? { id, jsonSchema: true, jsonObject: true, tools: true };

  let queue: FakeReply[] = [];
  let handler = options.handler;
  let chatIndex = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let nextId = 1;
  const requests: FakeLoggedRequest[] = [];
  const hanging = new Set<ServerResponse>();

  async function route(req: IncomingMessage, res: ServerResponse, path: string, body: unknown): Promise<void> {
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendError(res, { status: 401, message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' });
    }
    if (req.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, {
        object: 'list',
        data: [...models.values()].map((m) => ({ id: m.id, object: 'model', created: 1_700_000_000, owned_by: 'fake' })),
      });
    }
    if (req.method === 'POST' && path === '/v1/embeddings') return embeddings(res, body);
    if (req.method === 'POST' && path === '/v1/chat/completions') return chat(res, body);
    return sendError(res, { status: 404, message: `Unknown request URL: ${req.method} ${path}.`, type: 'invalid_request_error', code: 'unknown_url' });
  }

  function embeddings(res: ServerResponse, body: unknown): void {
    const b = body as { model?: string; input?: string | string[]; encoding_format?: string; dimensions?: number };
    if (!b || typeof b.model !== 'string' || b.input === undefined) {
      return sendError(res, { status: 400, message: "'model' and 'input' are required", type: 'invalid_request_error' });
    }
    const inputs = Array.isArray(b.input) ? b.input : [b.input];
    const dims = b.dimensions ?? options.embeddingDimensions ?? 8;
    const data = inputs.map((text, index) => {
      const v = embedText(String(text), dims);
      const embedding = b.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
      return { object: 'embedding', index, embedding };
    });
    const tokens = inputs.reduce((n, t) => n + estimateTokens(String(t)), 0);
    sendJson(res, 200, { object: 'list', model: b.model, data, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  }

  async function chat(res: ServerResponse, body: unknown): Promise<void> {
    const r = body as FakeChatRequest;
    if (!r || typeof r.model !== 'string' || !Array.isArray(r.messages) || r.messages.length === 0) {
      return sendError(res, { status: 400, message: "'model' and a non-empty 'messages' are required.", type: 'invalid_request_error' });
    }
    const model = modelOf(r.model);
    const index = chatIndex++;
    const rf = r.response_format?.type;
    if ((rf === 'json_schema' && !model.jsonSchema) || (rf === 'json_object' && !model.jsonObject)) {
      // OpenAI's wording for models without structured outputs.
      return sendError(res, {
        status: 400,
        message: `Invalid parameter: 'response_format' of type '${rf}' is not supported with this model.`,
        type: 'invalid_request_error',
        param: 'response_format',
        code: null,
      });
    }
    if (r.tools?.length && !model.tools) {
      return sendError(res, { status: 400, message: `'tools' is not supported with this model.`, type: 'invalid_request_error', param: 'tools', code: null });
    }

    const reply = queue.shift() ?? (await handler?.(r, { index, model })) ?? defaultReply(r);
    if ('hang' in reply) {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    await sleep((options.delayMs ?? 0) + (reply.delayMs ?? 0));
    if (res.destroyed) return;
    if ('drop' in reply) {
      res.socket?.destroy();
      return;
    }
    if ('error' in reply) {
      const headers: Record<string, string> = {};
      if (reply.retryAfter !== undefined) headers['retry-after'] = String(reply.retryAfter);
      if (reply.retryAfterMs !== undefined) headers['retry-after-ms'] = String(reply.retryAfterMs);
      return sendError(res, reply.error, headers);
    }

    const promptTokens = estimateTokens(promptText(r));
    const maxTokens = r.max_completion_tokens ?? r.max_tokens;
    let content: string | null;
    let toolCalls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> | undefined;
    let finish: FakeFinishReason;
    let refusal: string | null = null;
    if ('toolCalls' in reply) {
      content = reply.content ?? null;
      toolCalls = reply.toolCalls.map((c, i) => ({
        id: c.id ?? `call_${index}_${i}`,
        type: 'function' as const,
        function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
      }));
      finish = 'tool_calls';
    } else {
      content = typeof reply.content === 'string' ? reply.content : JSON.stringify(reply.content);
      finish = reply.finishReason ?? 'stop';
      refusal = reply.refusal ?? null;
      // Like a real server, a reply longer than the caller's output limit is cut and marked `length`.
      if (maxTokens !== undefined && reply.finishReason === undefined && estimateTokens(content) > maxTokens) {
        content = content.slice(0, maxTokens * 4);
        finish = 'length';
      }
    }
    const completionTokens = estimateTokens((content ?? '') + (toolCalls?.map((c) => c.function.arguments).join('') ?? ''));
    const usage: FakeUsage = {
      prompt_tokens: reply.usage?.prompt_tokens ?? promptTokens,
      completion_tokens: reply.usage?.completion_tokens ?? completionTokens,
      total_tokens: 0,
    };
    usage.total_tokens = reply.usage?.total_tokens ?? usage.prompt_tokens + usage.completion_tokens;
    const id = `chatcmpl-fake-${nextId++}`;
    const created = Math.floor(Date.now() / 1000);

    if (r.stream) return stream(res, r, { id, created, content, toolCalls, finish, usage });
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: r.model,
      system_fingerprint: 'fake',
      choices: [{ index: 0, message: { role: 'assistant', content, refusal, ...(toolCalls ? { tool_calls: toolCalls } : {}) }, logprobs: null, finish_reason: finish }],
      usage,
    });
  }

  async function stream(
    res: ServerResponse,
    r: FakeChatRequest,
    m: { id: string; created: number; content: string | null; toolCalls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>; finish: FakeFinishReason; usage: FakeUsage },
  ): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const chunk = (delta: object, finish: FakeFinishReason | null = null, extra: object = {}) =>
      `data: ${JSON.stringify({ id: m.id, object: 'chat.completion.chunk', created: m.created, model: r.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra })}\n\n`;
    const write = async (s: string) => {
      if (res.destroyed) return;
      res.write(s);
      await new Promise((resolve) => setImmediate(resolve));
    };
    await write(chunk({ role: 'assistant', content: '' }));
    for (const piece of pieces(m.content ?? '', 16)) await write(chunk({ content: piece }));
    for (const [i, call] of (m.toolCalls ?? []).entries()) {
      await write(chunk({ tool_calls: [{ index: i, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
      for (const piece of pieces(call.function.arguments, 16)) await write(chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] }));
    }
    await write(chunk({}, m.finish));
    if (r.stream_options?.include_usage) {
      await write(`data: ${JSON.stringify({ id: m.id, object: 'chat.completion.chunk', created: m.created, model: r.model, choices: [], usage: m.usage })}\n\n`);
    }
    await write('data: [DONE]\n\n');
    res.end();
  }

  const server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let counted = true;
    const done = () => {
      if (counted) inFlight--;
      counted = false;
    };
    res.on('close', done);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        /* logged as raw text; the route answers 400 */
      }
      const path = (req.url ?? '/').split('?')[0]!;
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body, at: Date.now() });
      if (typeof body === 'string' && body) {
        sendError(res, { status: 400, message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error' });
        return;
      }
      route(req, res, path, body).catch((e) => {
        if (!res.headersSent) sendError(res, { status: 500, message: `fake server: ${String(e)}`, type: 'server_error' });
        else res.end();
      });
    });
  });
  server.keepAliveTimeout = 1_000;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host}:${port}`;

  const chatRequests = () =>
    requests.filter((r) => r.path === '/v1/chat/completions' && r.body && typeof r.body === 'object').map((r) => r.body as FakeChatRequest);

  return {
    origin,
    baseUrl: `${origin}/v1`,
    env: { OPENAI_BASE_URL: `${origin}/v1`, OPENAI_API_KEY: 'sk-test-not-a-secret', MODEL_NAME: 'fake-model' },
    enqueue: (...replies) => void queue.push(...replies),
    setHandler: (h) => void (handler = h),
    pending: () => queue.length,
    requests,
    chatRequests,
    lastChat: () => chatRequests().at(-1),
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    reset() {
      requests.length = 0;
      queue = [];
      chatIndex = 0;
      maxInFlight = inFlight;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendError(
  res: ServerResponse,
  e: { status: number; message?: string; type?: string; code?: string | null; param?: string | null },
  headers: Record<string, string> = {},
): void {
  const type = e.type ?? (e.status === 429 ? 'rate_limit_exceeded' : e.status >= 500 ? 'server_error' : 'invalid_request_error');
  const message = e.message ?? (e.status === 429 ? 'Rate limit reached for requests.' : e.status >= 500 ? 'The server had an error while processing your request.' : 'Bad request.');
  sendJson(res, e.status, { error: { message, type, param: e.param ?? null, code: e.code ?? null } }, headers);
}

const sleep = (ms: number) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

function pieces(s: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

/** A deterministic unit vector from the text, so equal texts embed equally. */
function embedText(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (let i = 0; i < text.length; i++) v[(text.charCodeAt(i) * 31 + i) % dims]! += 1;
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / norm);
}

function defaultReply(r: FakeChatRequest): FakeReply {
  const forced = r.tool_choice;
  if (r.tools?.length && forced && forced !== 'auto' && forced !== 'none') {
    const tool = typeof forced === 'object' ? r.tools.find((t) => t.function.name === forced.function.name) ?? r.tools[0]! : r.tools[0]!;
    return { toolCalls: [{ name: tool.function.name, arguments: sampleFromSchema(tool.function.parameters ?? { type: 'object' }) }] };
  }
  if (r.response_format?.type === 'json_schema') return { content: JSON.stringify(sampleFromSchema(r.response_format.json_schema?.schema ?? {})) };
  if (r.response_format?.type === 'json_object') return { content: '{}' };
  return { content: 'This is a reply from the fake model.' };
}

/** A small value satisfying the common JSON Schema keywords (enough for made-up replies). */
export function sampleFromSchema(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (depth > 12 || schema === true || schema === undefined) return null;
  if (typeof schema !== 'object' || schema === null) return null;
  const s = schema as Record<string, any>;
  if (typeof s.$ref === 'string') {
    const target = s.$ref
      .replace(/^#\/?/, '')
      .split('/')
      .filter(Boolean)
      .reduce((o: any, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], root);
    return sampleFromSchema(target, root, depth + 1);
  }
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if (Array.isArray(s.allOf)) return Object.assign({}, ...s.allOf.map((x: unknown) => sampleFromSchema(x, root, depth + 1)));
  for (const k of ['anyOf', 'oneOf'] as const) if (Array.isArray(s[k]) && s[k].length) return sampleFromSchema(s[k][0], root, depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') ?? 'null' : s.type ?? (s.properties ? 'object' : s.items ? 'array' : undefined);
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) out[k] = sampleFromSchema(v, root, depth + 1);
      return out;
    }
    case 'array': {
      const n = s.minItems ?? 0;
      const item = Array.isArray(s.prefixItems) ? undefined : s.items;
      const fixed = Array.isArray(s.prefixItems) ? s.prefixItems.map((x: unknown) => sampleFromSchema(x, root, depth + 1)) : [];
      return [...fixed, ...Array.from({ length: Math.max(0, n - fixed.length) }, () => sampleFromSchema(item, root, depth + 1))];
    }
    case 'string': {
      const byFormat: Record<string, string> = {
        email: 'user@example.com',
        uri: 'https://example.com/',
        url: 'https://example.com/',
        'date-time': '2024-01-01T00:00:00Z',
        date: '2024-01-01',
        time: '00:00:00Z',
        uuid: '00000000-0000-4000-8000-000000000000',
      };
      const v = byFormat[s.format as string] ?? 'example';
      return v.length >= (s.minLength ?? 0) ? v : v.padEnd(s.minLength, 'x');
    }
    case 'integer':
      return Math.ceil(s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0));
    case 'number':
      return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0);
    case 'boolean':
      return false;
    default:
      return null;
  }
}
