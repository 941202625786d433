import type { MonitorJudgment } from '@wds/contracts';
import type { CheckPageRow, MonitorCheckRow, MonitorRow, RecipientSubscription } from '@wds/db';

/** Monitors, checks and check pages as the API answers them (Firecrawl's v2 reference, the JS SDK's types). */

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
const EMPTY = { totalPages: 0, same: 0, changed: 0, new: 0, removed: 0, error: 0 };

/** `subscriptions`: the monitor's recipients' states (monitor-recipients.ts subscriptionsView), absent without recipients. */
export function monitorView(m: MonitorRow, subscriptions?: RecipientSubscription[]) {
  return {
    id: m.id,
    name: m.name,
    status: m.status,
    schedule: m.schedule,
    nextRunAt: iso(m.nextRunAt),
    lastRunAt: iso(m.lastRunAt),
    currentCheckId: m.runningCheckId,
    targets: m.targets as { id: string; type: 'scrape' | 'crawl' | 'search' }[],
    webhook: m.webhook ?? null,
    notification: (m.notification as Record<string, unknown> | null) ?? null,
    ...(subscriptions ? { emailRecipientSubscriptions: subscriptions } : {}),
    retentionDays: m.retentionDays,
    estimatedCreditsPerMonth: m.estimatedCreditsPerMonth,
    lastCheckSummary: (m.lastCheckSummary as typeof EMPTY | null) ?? null,
    goal: m.goal,
    judgeEnabled: m.judgeEnabled,
    createdAt: m.createdAt.toISOString(),
    updatedAt: m.updatedAt.toISOString(),
  };
}

export function checkView(k: MonitorCheckRow) {
  const running = k.status === 'running' || k.status === 'queued';
  return {
    id: k.id,
    monitorId: k.monitorId,
    status: k.status,
    trigger: k.trigger,
    scheduledFor: iso(k.scheduledFor),
    startedAt: iso(k.startedAt),
    finishedAt: iso(k.finishedAt),
    estimatedCredits: k.estimatedCredits,
    reservedCredits: null,
    actualCredits: running ? null : (k.actualCredits ?? 0),
    // Checks bill what they did when they end (no reservation); a skipped check bills nothing.
    billingStatus: k.billingStatus,
    summary: (k.summary as typeof EMPTY | null) ?? { ...EMPTY, totalPages: k.estimatedCredits ?? 0 },
    targetResults: (k.targetResults as { targetId: string; type: string }[] | null) ?? null,
    notificationStatus: (k.notificationStatus as Record<string, unknown> | null) ?? null,
    error: k.error,
    createdAt: k.createdAt.toISOString(),
    updatedAt: k.updatedAt.toISOString(),
  };
}

export function checkPageView(p: CheckPageRow) {
  return {
    id: p.id,
    targetId: p.targetId,
    url: p.url,
    status: p.status as 'same' | 'new' | 'changed' | 'removed' | 'error',
    previousScrapeId: p.previousScrapeId,
    currentScrapeId: p.currentScrapeId,
    statusCode: p.statusCode,
    error: p.error,
    metadata: (p.metadata as Record<string, unknown> | null) ?? null,
    diff: (p.diff as { text?: string; json?: Record<string, unknown> } | null) ?? null,
    snapshot: (p.snapshot as { json?: unknown } | null) ?? null,
    judgment: (p.judgment as MonitorJudgment | null) ?? null,
    createdAt: p.createdAt.toISOString(),
  };
}
