import { agentWebhookEventOf, type AgentRunOptions } from '@wds/contracts';
import { appendJobEvent, stableUuid, type Db, type EventWebhook } from '@wds/db';
import type { RunContext } from './context';

/**
 * Trace events (the SDK's AgentTraceEvent) are job events of the emitting agent's run: the job's
 * gap-free numbering is that agent's `producerSequence`, the idempotency key makes each event
 * exactly-once whatever the retries, and `eventId` is derived from the key, so a replayed
 * append names the same event. Payloads are small (ids, names, counts, tool parameters), never
 * page content. Events of the job's own run that the webhook subscribes to (short names:
 * started, action, completed, failed, cancelled) get their delivery in the same statement.
 */
export async function traceEvent(db: Db, c: RunContext, type: string, key: string, fields: Record<string, unknown> = {}): Promise<boolean> {
  // The spec gives error events and terminal events an `error` object *and* a `retryable` boolean;
  // the SDK's AgentTraceError carries it inside `error`: both are sent.
  const err = fields.error as { retryable?: boolean } | null | undefined;
  const payload = { eventId: stableUuid('agent-event', c.run.id, key), ...fields, ...(err && typeof err.retryable === 'boolean' ? { retryable: err.retryable } : {}) };
  const r = await appendJobEvent(db, { jobId: c.run.id, type, key, payload, webhook: c.isRoot ? webhookFor(c.rootOptions, type, payload) : null });
  return r.appended;
}

function webhookFor(o: AgentRunOptions, type: string, payload: Record<string, unknown>): EventWebhook | null {
  const hook = o.webhook;
  const event = agentWebhookEventOf(type, payload);
  if (!hook || !event) return null;
  if (hook.events && !hook.events.includes(event)) return null;
  return { url: hook.url, jobKind: 'agent' };
}
