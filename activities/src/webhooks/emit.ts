import type { WebhookEvent } from '@wds/contracts';
import { enqueueWebhook, type Db } from '@wds/db';
import type { LoadedJob } from '../crawl/job-options';

/**
 * Appends a webhook event to the outbox (delivered by the workers' dispatcher). Event types
 * follow Firecrawl's docs: crawl.started|page|completed|failed, batch_scrape.*.
 */
export async function emitJobEvent(db: Db, job: LoadedJob, event: WebhookEvent, data: unknown[] = [], error?: string): Promise<void> {
  const hook = job.webhook;
  if (!hook) return;
  if (hook.events && !hook.events.includes(event)) return;
  const prefix = job.kind === 'crawl' ? 'crawl' : 'batch_scrape';
  const payload: Record<string, unknown> = { success: event !== 'failed', type: `${prefix}.${event}`, id: job.id, data, metadata: hook.metadata ?? {} };
  if (error) payload.error = error;
  await enqueueWebhook(db, { jobId: job.id, url: hook.url, headers: hook.headers ?? null, payload });
}
