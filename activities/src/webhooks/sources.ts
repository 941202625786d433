import { agentWebhookEventOf, withheldAgentEvent, type AgentRunOptions, type WebhookEvent } from '@wds/contracts';
import { documentByKey, latestAgentArtifact, loadAgentRun, type Db, type DueDelivery, type BillingKind } from '@wds/db';
import { loadJobOptions } from '../crawl/job-options';
import { monitorWebhookRequest } from '../monitor/webhook-source';

/** What a delivery sends: the JSON body (before signing) and the headers the job asked for. */
export type WebhookRequest = { body: string; headers: Record<string, string> } | { drop: string };

/**
 * Builds the request of one delivery from its event, when it is sent. One source per job kind
 * whose jobs have webhooks; wave-2 kinds add theirs here.
 */
export type WebhookSource = (db: Db, d: DueDelivery) => Promise<WebhookRequest>;

/**
 * Crawls and batch scrapes, in Firecrawl's format: {success, type: crawl.<event> |
 * batch_scrape.<event>, id, data, metadata, error?}; `data` holds the page's document for a
 * `page` event (read from crawl_documents now; the event only names its URL key), else [].
 */
const crawlSource: WebhookSource = async (db, d) => {
  const job = await loadJobOptions(db, d.jobId);
  if (!job.webhook) return { drop: 'the job has no webhook' };
  const event = d.eventType as WebhookEvent;
  let data: unknown[] = [];
  if (event === 'page') {
    const doc = await documentByKey(db, d.jobId, String(d.eventPayload.urlKey));
    if (doc === null) return { drop: 'the page document is no longer stored' };
    data = [doc];
  }
  const prefix = job.kind === 'crawl' ? 'crawl' : 'batch_scrape';
  const body: Record<string, unknown> = { success: event !== 'failed', type: `${prefix}.${event}`, id: job.id, data, metadata: job.webhook.metadata ?? {} };
  if (typeof d.eventPayload.error === 'string') body.error = d.eventPayload.error;
  // The caller's audit attribution comes back with every event of the job (Firecrawl's webhook has no such field: an addition).
  if (job.scrape.auditMetadata) body.auditMetadata = job.scrape.auditMetadata;
  return { body: JSON.stringify(body), headers: job.webhook.headers ?? {} };
};

/**
 * Agent jobs: short event names (started, action, completed, failed, cancelled) with a dotted
 * `type` (agent.completed), as the SDK's AgentWebhookConfig names them. `data` is the run's data
 * on completed, the tool call (name and id) on action, else empty. An action is sent while the
 * job runs, before it is known to be billed: it carries nothing of the call's result
 * (withheldAgentEvent; the trace serves it once the job has completed).
 */
const agentSource: WebhookSource = async (db, d) => {
  const run = await loadAgentRun(db, d.jobId);
  const hook = (run?.options as AgentRunOptions | undefined)?.webhook;
  if (!run || !hook) return { drop: 'the job has no webhook' };
  const event = agentWebhookEventOf(d.eventType, d.eventPayload);
  if (!event) return { drop: `trace event ${d.eventType} is not a webhook event` };
  const p = withheldAgentEvent(d.eventType, d.eventPayload) as { toolName?: string; toolCallId?: string; error?: { message?: string } | null };
  // The result artifact, not the row: run.finished is recorded just before the row is written.
  const result = event === 'completed' ? await latestAgentArtifact(db, run.id, 'result') : null;
  const data = event === 'completed' ? (result ? (JSON.parse(result.content) as unknown) : null) : event === 'action' ? { toolName: p.toolName, toolCallId: p.toolCallId } : null;
  const body: Record<string, unknown> = { success: event === 'started' || event === 'action' || event === 'completed', type: `agent.${event}`, id: run.id, data, metadata: hook.metadata ?? {} };
  if (p.error?.message) body.error = p.error.message;
  const audit = (run.options as AgentRunOptions).auditMetadata;
  if (audit) body.auditMetadata = audit;
  return { body: JSON.stringify(body), headers: hook.headers ?? {} };
};

export const WEBHOOK_SOURCES: Partial<Record<BillingKind, WebhookSource>> = { crawl: crawlSource, batch: crawlSource, agent: agentSource, monitor: monitorWebhookRequest };
