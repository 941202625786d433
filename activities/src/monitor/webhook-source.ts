import type { MonitorWebhook } from '@wds/contracts';
import { checkPages, loadCheckById, loadCheckPage, monitorsById, type DueDelivery, type Db } from '@wds/db';

/** Pages a monitor.check.completed body names (those not `same`), at most. */
const COMPLETED_PAGES = 100;

type WebhookRequest = { body: string; headers: Record<string, string> } | { drop: string };

/**
 * Monitor checks' webhook bodies, in Firecrawl's format: {success, type: monitor.page |
 * monitor.check.completed, id: the check id, data: [...], metadata}. A page event carries the
 * page's result (status, scrape ids, error, diff); the completion carries the check's status
 * and summary, and — beyond upstream — the pages that were not `same` (url, status).
 */
export async function monitorWebhookRequest(db: Db, d: DueDelivery): Promise<WebhookRequest> {
  const k = await loadCheckById(db, d.jobId);
  if (!k) return { drop: 'the check is no longer stored' };
  const monitor = (await monitorsById(db, [k.monitorId])).get(k.monitorId);
  const hook = monitor?.webhook as MonitorWebhook | null | undefined;
  if (!monitor || !hook) return { drop: 'the monitor has no webhook' };
  const base = { monitorId: monitor.id, checkId: d.jobId };
  let body: Record<string, unknown>;
  if (d.eventType === 'monitor.page') {
    const p = await loadCheckPage(db, d.jobId, String(d.eventPayload.targetId), String(d.eventPayload.urlKey));
    if (!p) return { drop: 'the page result is no longer stored' };
    const data = { ...base, targetId: p.targetId, url: p.url, status: p.status, previousScrapeId: p.previousScrapeId, currentScrapeId: p.currentScrapeId, error: p.error, ...(p.diff ? { diff: p.diff } : {}) };
    body = { success: p.status !== 'error', type: 'monitor.page', id: d.jobId, data: [data], metadata: hook.metadata ?? {} };
  } else {
    const pages = (await checkPages(db, k.id, { limit: COMPLETED_PAGES, skip: 0, notSame: true })).map((p) => ({ id: p.id, targetId: p.targetId, url: p.url, status: p.status }));
    body = { success: k.status === 'completed', type: 'monitor.check.completed', id: d.jobId, data: [{ ...base, status: k.status, summary: k.summary, pages }], metadata: hook.metadata ?? {} };
    if (k.error) body.error = k.error;
  }
  return { body: JSON.stringify(body), headers: hook.headers ?? {} };
}
