import type { WebhookEvent } from '@wds/contracts';
import { appendJobEvent, type Db, type EventWebhook } from '@wds/db';
import type { LoadedJob } from '../crawl/job-options';

/**
 * Records a crawl or batch job's `started`, `completed` or `failed` event (job_events), once per
 * job whatever the retries (the event type is its key), with a webhook delivery when the job's
 * webhook subscribes to it. `page` events are recorded by finishPage with the document.
 */
export async function recordJobEvent(db: Db, job: LoadedJob, event: Exclude<WebhookEvent, 'page'>, payload: Record<string, unknown> = {}): Promise<void> {
  await appendJobEvent(db, { jobId: job.id, type: event, key: event, payload, webhook: webhookFor(job, event) });
}

/** Where the job's webhook wants this event, or null (no webhook, or its `events` filter leaves it out). */
export function webhookFor(job: LoadedJob, event: WebhookEvent): EventWebhook | null {
  const hook = job.webhook;
  if (!hook) return null;
  if (hook.events && !hook.events.includes(event)) return null;
  return { url: hook.url, jobKind: job.kind };
}
