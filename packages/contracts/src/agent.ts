import { z } from 'zod';
import { actionsSchema } from './actions';
import { httpUrl, locationSchema } from './scrape';
import { webhookSchemaOf } from './crawl';
import { auditMetadataSchema, threatProtectionSchema, type AuditMetadata, type ThreatProtection } from './enterprise';

/**
 * POST /v2/agent and the agent's public shapes, as Firecrawl's v2 docs and the JS SDK
 * (`prepareAgentPayload`, `AgentStatusResponse`, `AgentTraceEvent`, …) define them. Unknown
 * fields are rejected like everywhere else; fields the SDKs send that have no effect here
 * (`origin`, `integration`, `threatProtection`, `auditMetadata`) are accepted.
 */

/** Firecrawl's agent model names. Every one maps to a configured model (WDS_AGENT_MODELS, else MODEL_NAME). */
export const AGENT_MODELS = ['spark-2', 'spark-1-pro', 'spark-1-mini', 'FIRE-1'] as const;
export type AgentModel = (typeof AGENT_MODELS)[number];
/** Firecrawl's current default: every run executes on spark-2 unless told otherwise. */
export const DEFAULT_AGENT_MODEL: AgentModel = 'spark-2';

/** Firecrawl's default `maxCredits` (docs: "Defaults to 2,500 if not set"). */
export const DEFAULT_AGENT_MAX_CREDITS = 2_500;

/** The SDK's AgentWebhookEvent: short names; the payload's `type` is `agent.<name>`. */
export const AGENT_WEBHOOK_EVENTS = ['started', 'action', 'completed', 'failed', 'cancelled'] as const;
export type AgentWebhookEvent = (typeof AGENT_WEBHOOK_EVENTS)[number];

export const agentWebhookSchema = webhookSchemaOf(AGENT_WEBHOOK_EVENTS);
export type AgentWebhookConfig = z.output<typeof agentWebhookSchema>;

/**
 * The SDK's AgentExchangeOptions: Exchange is Firecrawl's catalogue of provider tools (the
 * deployment's catalog here, packages/catalog). `enabled` gives the agent the `find_tools` and
 * `call_tool` tools; `toolkits` limits them to those providers (ids) or categories; `maxCalls`
 * caps its paid calls; `onTermsRequired` says what a provider whose data terms the team has not
 * accepted does to the run (`skip`, the default: it is listed in `exchange.skippedProviders`;
 * `ask`: the turn also ends with a `terms` pendingApproval), and `approve` / `decline` answer
 * that offer on the thread's next turn. Approvals of paid calls (`requireApproval`) are not built.
 */
const exchangeSchema = z.strictObject({
  enabled: z.boolean().optional(),
  toolkits: z.array(z.string().min(1).max(200)).max(5).optional(),
  maxCalls: z.int().min(0).max(10_000).optional(),
  requireApproval: z.boolean().optional(),
  approve: z.strictObject({ approvalId: z.string().min(1).max(200), callIds: z.array(z.string().max(200)).max(100).optional(), always: z.boolean().optional() }).optional(),
  decline: z.strictObject({ approvalId: z.string().min(1).max(200) }).optional(),
  onTermsRequired: z.enum(['skip', 'ask']).optional(),
});

export const agentRequestSchema = z.strictObject({
  prompt: z.string({ error: 'prompt is required' }).trim().min(1, 'prompt is required').max(10_000),
  urls: z.array(httpUrl).max(100).nullable().optional(),
  /** A JSON Schema for `data`; compiled by the API (422 when it is not valid JSON Schema). */
  schema: z.record(z.string(), z.unknown()).nullable().optional(),
  /** Credits this run (and its sub-agents) may use at most. */
  maxCredits: z.int('maxCredits must be a whole number of credits').min(1).max(100_000_000).nullable().optional(),
  strictConstrainToURLs: z.boolean().nullable().optional(),
  model: z.enum(AGENT_MODELS).nullable().optional(),
  effort: z.enum(['low', 'medium', 'high']).nullable().optional(),
  webhook: agentWebhookSchema.nullable().optional(),
  threadId: z.uuid('threadId must be a UUID').nullable().optional(),
  mode: z.enum(['extract', 'chat']).nullable().optional(),
  exchange: exchangeSchema.nullable().optional(),
  /** The Python SDK sends these two. */
  location: locationSchema.nullable().optional(),
  zeroDataRetention: z.boolean().nullable().optional(),
  threatProtection: threatProtectionSchema.nullable().optional(),
  auditMetadata: auditMetadataSchema.nullable().optional(),
  origin: z.string().max(200).optional(),
  integration: z.string().max(200).nullable().optional(),
}).superRefine((o, ctx) => {
  if (o.exchange?.approve && o.exchange.decline) ctx.addIssue({ code: 'custom', path: ['exchange', 'decline'], message: 'approve and decline answer the same offer: send one of them' });
  for (const k of ['approve', 'decline'] as const) {
    if (o.exchange?.[k] && !o.threadId) ctx.addIssue({ code: 'custom', path: ['exchange', k], message: `exchange.${k} answers the previous turn of a thread: it needs threadId` });
  }
  if (o.strictConstrainToURLs && !o.urls?.length) {
    ctx.addIssue({ code: 'custom', path: ['strictConstrainToURLs'], message: 'strictConstrainToURLs needs a non-empty urls list' });
  }
});
export type AgentRequest = z.output<typeof agentRequestSchema>;

/** What the agent run keeps of its request (agent_runs.options): the request with its defaults filled in. */
export interface AgentRunOptions {
  prompt: string;
  urls?: string[];
  schema?: Record<string, unknown>;
  maxCredits: number;
  strictConstrainToURLs: boolean;
  model: AgentModel;
  effort?: 'low' | 'medium' | 'high';
  mode: 'extract' | 'chat';
  /** Catalog tools for the agent (the request's `exchange` with `enabled: true`, or inherited in a thread). */
  exchange?: AgentRunExchange;
  webhook?: AgentWebhookConfig;
  location?: z.output<typeof locationSchema>;
  origin?: string;
  integration?: string;
  /** Recorded with the run; auditMetadata comes back in its webhooks. */
  auditMetadata?: AuditMetadata;
  threatProtection?: ThreatProtection;
}

/** What a run keeps of `exchange`. */
export interface AgentRunExchange {
  toolkits?: string[];
  maxCalls?: number;
  /** What a gated provider does to the run (absent on runs stored before it existed: `skip`). */
  onTermsRequired?: AgentOnTermsRequired;
  /** This turn answers the previous turn's terms offer (`approve` / `decline`): its id, the answer and its providers. */
  termsAnswer?: { approvalId: string; approved: boolean; providers: string[] };
}
export type AgentOnTermsRequired = 'skip' | 'ask';

/**
 * The run's `exchange`: the request's, or on a follow-up turn that does not set `enabled` the
 * previous turn's (toolkits, maxCalls, onTermsRequired: the SDK's "omitted on a follow-up turn
 * inherits the previous turn's value"); `enabled: false` turns it off. The terms answer is the
 * API's to add (it checks the approval id).
 */
function runExchange(x: AgentRequest['exchange'], prior: AgentRunExchange | undefined): AgentRunExchange | undefined {
  if (x?.enabled === false || (!x?.enabled && !prior)) return undefined;
  const base = x?.enabled ? { ...(x.toolkits?.length ? { toolkits: x.toolkits } : {}), ...(x.maxCalls !== undefined ? { maxCalls: x.maxCalls } : {}) } : { ...(prior!.toolkits ? { toolkits: prior!.toolkits } : {}), ...(prior!.maxCalls !== undefined ? { maxCalls: prior!.maxCalls } : {}) };
  return { ...base, onTermsRequired: x?.onTermsRequired ?? prior?.onTermsRequired ?? 'skip' };
}

/** `prior`: the previous turn's options when the request continues a thread. */
export function agentRunOptions(r: AgentRequest, prior?: Pick<AgentRunOptions, 'exchange'>): AgentRunOptions {
  const exchange = runExchange(r.exchange, prior?.exchange);
  return {
    prompt: r.prompt,
    ...(r.urls?.length ? { urls: r.urls } : {}),
    ...(r.schema ? { schema: r.schema } : {}),
    maxCredits: r.maxCredits ?? DEFAULT_AGENT_MAX_CREDITS,
    strictConstrainToURLs: r.strictConstrainToURLs ?? false,
    model: r.model ?? DEFAULT_AGENT_MODEL,
    ...(r.effort ? { effort: r.effort } : {}),
    mode: r.mode ?? 'extract',
    ...(exchange ? { exchange } : {}),
    ...(r.webhook ? { webhook: r.webhook } : {}),
    ...(r.location ? { location: r.location } : {}),
    ...(r.origin ? { origin: r.origin } : {}),
    ...(r.integration ? { integration: r.integration } : {}),
    ...(r.auditMetadata ? { auditMetadata: r.auditMetadata } : {}),
    ...(r.threatProtection ? { threatProtection: r.threatProtection } : {}),
  };
}

/**
 * A run's state words. Stored as its job's status and outcome (workflows/src/agent/spec.ts
 * agentState); the public status folds them into processing / completed / failed (agentJob.publicStatus).
 */
export const AGENT_STATES = ['running', 'cancelling', 'succeeded', 'cancelled', 'credit_limit_reached', 'refused', 'parent_finished', 'internal'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

/** The spec's five error codes (Events: `error.code`). */
export type AgentErrorCode = 'cancelled' | 'credit_limit_reached' | 'parent_finished' | 'refused' | 'internal';

/** The SDK's AgentTraceError. */
export interface AgentTraceError {
  code: AgentErrorCode;
  source: 'agent' | 'tool' | 'billing' | 'system';
  retryable: boolean;
  message: string;
}

/** run.finished outcomes (SDK: AgentTraceRunFinishedEvent). */
export type AgentRunOutcome = 'succeeded' | 'failed' | 'cancelled' | 'refused' | 'credit_limit_reached';

/** A tool's arguments, as the model is told them (JSON Schema) and as activities check them (zod). */
export const agentToolArgs = {
  search: z.object({ query: z.string().min(1).max(500), limit: z.int().min(1).max(20).optional() }),
  map: z.object({ url: httpUrl, search: z.string().max(500).optional(), limit: z.int().min(1).max(500).optional() }),
  scrape: z.object({
    url: httpUrl,
    actions: actionsSchema.optional(),
    waitFor: z.int().min(0).max(30_000).optional(),
    mobile: z.boolean().optional(),
    onlyMainContent: z.boolean().optional(),
  }),
  extract: z.object({ pageId: z.uuid(), prompt: z.string().min(1).max(10_000), schema: z.record(z.string(), z.unknown()).optional() }),
  save_result: z.object({ data: z.unknown() }),
  finish: z.object({ data: z.unknown().optional(), message: z.string().max(100_000).optional() }),
  refuse: z.object({ reason: z.string().min(1).max(10_000) }),
  spawn_subagent: z.object({ prompt: z.string().min(1).max(10_000), urls: z.array(httpUrl).max(20).optional() }),
  wait_subagents: z.object({ ids: z.array(z.uuid()).max(20).optional() }),
  /** Exchange (the catalog): discovery, free. */
  find_tools: z.object({ query: z.string().max(1_000).optional(), url: httpUrl.optional() }),
  /** Exchange: one capability call, billed at its price. */
  call_tool: z.object({
    provider: z.string().min(1).max(200),
    capability: z.string().min(1).max(200),
    options: z.record(z.string(), z.unknown()).optional(),
    /** What the call adds to the answer, in the agent's words (shown to the user when the provider is skipped). */
    adds: z.string().max(500).optional(),
  }),
};
export type AgentToolName = keyof typeof agentToolArgs;
export const AGENT_TOOL_NAMES = Object.keys(agentToolArgs) as AgentToolName[];

/**
 * The webhook event (short name) a trace event of the job's own run stands for: run.started →
 * started, each finished tool call → action, run.finished → completed / cancelled / failed.
 */
export function agentWebhookEventOf(type: string, payload: Record<string, unknown>): AgentWebhookEvent | null {
  if (type === 'run.started') return 'started';
  if (type === 'tool_call.finished') return 'action';
  if (type !== 'run.finished') return null;
  if (payload.outcome === 'succeeded') return 'completed';
  return payload.outcome === 'cancelled' ? 'cancelled' : 'failed';
}
export type AgentToolArgsOf<N extends AgentToolName> = z.output<(typeof agentToolArgs)[N]>;

// ---- Responses (the OpenAPI route table, api-routes.ts; shapes as the JS SDK's Agent* types) ----

const uuid = z.uuid();
const isoTime = z.iso.datetime();
const publicStatus = z.enum(['processing', 'completed', 'failed']);

export const agentStartedResponseSchema = z.strictObject({
  success: z.literal(true),
  id: uuid,
  threadId: uuid.describe('The thread this run belongs to; pass it back as `threadId` to continue it.'),
  threadTurn: z.int().describe('1-based position of this run in its thread.'),
});

/** The SDK's AgentSkippedProvider. */
const skippedProviderSchema = z.strictObject({
  provider: z.string(),
  name: z.string(),
  capability: z.string().optional(),
  adds: z.string().optional().describe('What it would have added, in the agent\'s words.'),
  reason: z.literal('terms_required'),
  version: z.string().describe('The gating terms version.'),
  termsUrl: z.string().describe('Where the terms are published.'),
});

/** The SDK's AgentTermsGate (one provider of a `terms` pendingApproval). */
const termsGateSchema = z.strictObject({
  provider: z.string(),
  name: z.string(),
  capability: z.string().optional(),
  adds: z.string().optional(),
  version: z.string(),
  digest: z.string().nullable(),
  url: z.string(),
});

/** The SDK's AgentTermsRequiredAction. */
const termsActionSchema = z.strictObject({
  type: z.literal('accept_terms'),
  approvalId: z.string(),
  providers: z.array(termsGateSchema.extend({
    show: z.strictObject({ provider: z.literal('firecrawl'), capability: z.literal('terms/show'), options: z.strictObject({ provider: z.string() }) }),
    accept: z.strictObject({
      provider: z.literal('firecrawl'),
      capability: z.literal('terms/accept'),
      options: z.strictObject({ provider: z.string(), version: z.string(), digest: z.string().nullable(), confirmed: z.literal(true) }),
    }),
  })),
});

/** The SDK's PendingTermsApproval. */
export const pendingTermsApprovalSchema = z.strictObject({
  id: z.string(),
  kind: z.literal('terms'),
  reason: z.string(),
  resolution: z.strictObject({ approved: z.boolean(), callIds: z.array(z.string()), always: z.boolean(), byRunId: z.string() }).nullable(),
  calls: z.array(z.never()),
  terms: z.array(termsGateSchema),
});

export const agentStatusResponseSchema = z.strictObject({
  success: z.literal(true),
  status: publicStatus,
  data: z.unknown().optional().describe('The result, on completion only: a failed run is not billed and returns no data.'),
  error: z.string().optional(),
  message: z.string().optional().describe("The agent's closing message (chat mode answers here)."),
  model: z.string(),
  effort: z.enum(['low', 'medium', 'high']).optional(),
  mode: z.enum(['extract', 'chat']),
  creditsUsed: z.int().describe('Live while running (credits reserved and charged so far); the bill once finished (0 for failed runs).'),
  expiresAt: isoTime,
  threadId: uuid,
  threadTurn: z.int(),
  steps: z.int().describe('Model steps taken by the orchestrator.'),
  createdAt: isoTime,
  finishedAt: isoTime.optional(),
  exchange: z.strictObject({
    enabled: z.boolean(),
    toolkits: z.array(z.string()).optional(),
    requireApproval: z.boolean(),
    onTermsRequired: z.enum(['skip', 'ask']).describe('What the run resolved to after thread inheritance.'),
    paidCalls: z.int().describe('Catalog calls billed at a price above 0.'),
    creditsUsed: z.int().nullable().describe('Credits of those calls.'),
    skippedProviders: z.array(skippedProviderSchema).optional().describe('Gated providers that would have helped and were not called (any mode).'),
    requiresAction: termsActionSchema.optional().describe('`ask` mode, when a terms offer ended the turn: the calls that show and accept the terms.'),
  }).optional().describe('The SDK\'s AgentExchangeSummary: present when the run had catalog tools.'),
  pendingApproval: pendingTermsApprovalSchema.optional().describe('The SDK\'s PendingTermsApproval: the turn ended waiting for the caller to accept providers\' data terms.'),
});

export const agentListResponseSchema = z.strictObject({
  success: z.literal(true),
  agents: z.array(z.strictObject({
    id: uuid,
    createdAt: isoTime,
    targetHint: z.string(),
    origin: z.string(),
    integration: z.string().optional(),
    settings: z.strictObject({ hidden: z.boolean(), starred: z.boolean(), label: z.string().optional() }),
    status: publicStatus,
    options: z.strictObject({
      urls: z.array(z.string()).optional(),
      prompt: z.string(),
      schema: z.unknown().optional(),
      model: z.string(),
      effort: z.enum(['low', 'medium', 'high']).optional(),
    }),
  })),
  next: z.string().optional().describe('Absolute URL of the next (older) page: `?before=<unix ms>`.'),
});

export const agentCancelResponseSchema = z.strictObject({ success: z.literal(true) });

/** One trace event (the SDK's AgentTraceEvent union): the common fields, and the type's own. */
export const agentTraceEventSchema = z.looseObject({
  schemaVersion: z.literal(1),
  eventId: uuid,
  runId: uuid,
  occurredAt: isoTime,
  producerSequence: z.int().describe("Gap-free per agent: the agent's own event count."),
  agent: z.strictObject({ id: uuid, role: z.enum(['orchestrator', 'subagent', 'browser', 'system']), name: z.string(), parentId: uuid.optional() }),
  type: z.string(),
});

export const agentTraceResponseSchema = z.strictObject({
  success: z.literal(true),
  id: uuid,
  events: z.array(agentTraceEventSchema),
  creditsUsed: z.int(),
  activeBrowserSessions: z.array(z.strictObject({ id: z.string(), liveViewUrl: z.string(), viewport: z.strictObject({ width: z.int(), height: z.int() }) })).optional(),
});

export const agentSnapshotResponseSchema = z.strictObject({
  success: z.literal(true),
  id: uuid,
  snapshotId: uuid,
  snapshot: z.string().describe('The artifact version: a JSON text for json artifacts, markdown for pages.'),
});

export const agentThreadResponseSchema = z.strictObject({
  success: z.literal(true),
  thread: z.strictObject({
    id: uuid,
    createdAt: isoTime,
    updatedAt: isoTime,
    status: z.enum(['idle', 'running']),
    runs: z.array(z.strictObject({
      id: uuid,
      turn: z.int(),
      mode: z.enum(['extract', 'chat']),
      prompt: z.string(),
      urls: z.array(z.string()).optional(),
      schema: z.unknown().optional(),
      effort: z.enum(['low', 'medium', 'high']).optional(),
      status: z.enum(['processing', 'succeeded', 'failed', 'cancelled', 'refused', 'credit_limit_reached']),
      createdAt: isoTime,
      finishedAt: isoTime.nullable(),
      creditsUsed: z.int().nullable(),
      message: z.string().nullable(),
      data: z.unknown().optional(),
      pendingApproval: pendingTermsApprovalSchema.nullable().optional(),
    })),
  }),
});
