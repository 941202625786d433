import type { MonitorWebhook } from '@wds/contracts';
import { appendJobEvent, boundedKey, type Db, type EndedCheck, type EventWebhook, type MonitorRow } from '@wds/db';
import { creditsUsed, monitorChecksEnded, monitorScheduleLag } from '@wds/metrics';

/**
 * A check's events (job_events of the check: monitor.page per page result, then
 * monitor.check.completed), each with a webhook delivery when the monitor's webhook subscribes
 * to it. Only monitors with a webhook write events: an unchanged page of a monitor without one
 * costs nothing here.
 */
export function monitorWebhookFor(m: MonitorRow | undefined, event: 'monitor.page' | 'monitor.check.completed'): EventWebhook | null {
  const hook = m?.webhook as MonitorWebhook | null | undefined;
  if (!hook) return null;
  if (hook.events && !hook.events.includes(event)) return null;
  return { url: hook.url, jobKind: 'monitor' };
}

/** A monitor.page event per stored page result (for monitors whose webhook asks for them). */
export async function announceCheckPages(db: Db, pages: { checkId: string; monitorId: string; targetId: string; urlKey: string }[], monitors: Map<string, MonitorRow>): Promise<void> {
  for (const p of pages) {
    const webhook = monitorWebhookFor(monitors.get(p.monitorId), 'monitor.page');
    if (!webhook) continue;
    await appendJobEvent(db, { jobId: p.checkId, type: 'monitor.page', key: boundedKey('page', p.targetId, p.urlKey), payload: { targetId: p.targetId, urlKey: p.urlKey }, webhook });
  }
}

/** Metrics of ended checks, and their completion event (the webhook body reads the check when it is sent). */
export async function announceEndedChecks(db: Db, ended: EndedCheck[], monitors: Map<string, MonitorRow>): Promise<void> {
  for (const k of ended) {
    monitorChecksEnded.inc({ status: k.status });
    if (k.lagMs !== null) monitorScheduleLag.observe(Math.max(0, k.lagMs) / 1000);
    if (k.credits) creditsUsed.inc({ kind: 'monitor' }, k.credits);
    const webhook = monitorWebhookFor(monitors.get(k.monitorId), 'monitor.check.completed');
    if (!webhook) continue;
    await appendJobEvent(db, { jobId: k.id, type: 'monitor.check.completed', key: 'check.completed', payload: { status: k.status }, webhook });
  }
}
