import type { WebhookEvent } from '@wds/contracts';
import { enqueueWebhook, type Db, type WebhookEventRow } from '@wds/db';
import type { LoadedJob } from '../crawl/job-options';

/**
 * Appends a webhook event to the outbox (delivered by the workers' dispatcher). Event types
 * follow Firecrawl's docs: crawl.started|page|completed|failed, batch_scrape.*.
 */
export async function emitJobEvent(db: Db, job: LoadedJob, event: WebhookEvent, data: unknown[] = [], error?: string): Promise<void> {
  const row = jobEvent(job, event, data, error);
  if (row) await enqueueWebhook(db, row);
}

/** The outbox row of an event, or null when the job has no webhook or filters the event out. */
export function jobEvent(job: LoadedJob, event: WebhookEvent, data: unknown[] = [], error?: string): WebhookEventRow | null {
  const hook = job.webhook;
  if (!hook) return null;
  if (hook.events && !hook.events.includes(event)) return null;
  const prefix = job.kind === 'crawl' ? 'crawl' : 'batch_scrape';
  const payload: Record<string, unknown> = { success: event !== 'failed', type: `${prefix}.${event}`, id: job.id, data, metadata: hook.metadata ?? {} };
  if (error) payload.error = error;
  return { jobId: job.id, url: hook.url, headers: hook.headers ?? null, payload };
}
