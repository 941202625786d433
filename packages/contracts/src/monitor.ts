import { z } from 'zod';
import { crawlUrlKey } from '@wds/crawl/url-key';
import { webhookSchemaOf } from './crawl';
import { httpUrl, scrapeOptionsSchema } from './scrape';

/**
 * Monitors (`/v2/monitor…`) as Firecrawl's v2 API reference and the JS SDK's monitor methods
 * define them: scheduled checks of targets (named pages, a crawl, web searches), each check
 * comparing every page with the monitor's last version of it.
 */

export const MONITOR_WEBHOOK_EVENTS = ['monitor.page', 'monitor.check.completed'] as const;
export type MonitorWebhookEvent = (typeof MONITOR_WEBHOOK_EVENTS)[number];
export const monitorWebhookSchema = webhookSchemaOf(MONITOR_WEBHOOK_EVENTS);
export type MonitorWebhook = z.output<typeof monitorWebhookSchema>;

/** URLs one scrape target may name (every one is a page of every check). */
export const MAX_MONITOR_URLS = 1_000;

export const monitorScheduleSchema = z.strictObject({
  cron: z.string().trim().min(1).max(200).optional(),
  text: z.string().trim().min(1).max(200).optional(),
  timezone: z.string().min(1).max(64).optional(),
});

const targetId = z.string().min(1).max(64).regex(/^[A-Za-z0-9._:-]+$/, 'target ids are letters, digits and . _ : -').optional();

/** scrapeOptions of a target: scrape's, validated by its schema (the API stores what the request said, defaults left out). */
const targetScrapeOptions = scrapeOptionsSchema;

export const monitorScrapeTargetSchema = z.strictObject({
  id: targetId,
  type: z.literal('scrape'),
  urls: z.array(httpUrl).min(1, 'urls must contain at least one URL').max(MAX_MONITOR_URLS),
  scrapeOptions: targetScrapeOptions.optional(),
});

export const monitorCrawlTargetSchema = z.strictObject({
  id: targetId,
  type: z.literal('crawl'),
  url: httpUrl,
  /** Crawl options (limit, maxDiscoveryDepth or its alias maxDepth, includePaths, …): checked by the crawl schema by the API. */
  crawlOptions: z.record(z.string(), z.unknown()).optional(),
  scrapeOptions: targetScrapeOptions.optional(),
});

export const SEARCH_WINDOWS = ['5m', '15m', '1h', '6h', '24h', '7d'] as const;
export const monitorSearchTargetSchema = z
  .strictObject({
    id: targetId,
    type: z.literal('search'),
    queries: z.array(z.string().trim().min(1).max(256)).min(1).max(12),
    searchWindow: z.enum(SEARCH_WINDOWS).optional(),
    maxResults: z.int().min(1).max(50).optional(),
    includeDomains: z.array(z.string().min(1).max(253)).max(50).optional(),
    excludeDomains: z.array(z.string().min(1).max(253)).max(50).optional(),
  })
  .refine((t) => !(t.includeDomains?.length && t.excludeDomains?.length), { message: 'includeDomains and excludeDomains are mutually exclusive', path: ['excludeDomains'] });

export const monitorTargetSchema = z.discriminatedUnion('type', [monitorScrapeTargetSchema, monitorCrawlTargetSchema, monitorSearchTargetSchema]);
export type MonitorTarget = z.output<typeof monitorTargetSchema>;
export type MonitorScrapeTarget = z.output<typeof monitorScrapeTargetSchema>;
export type MonitorCrawlTarget = z.output<typeof monitorCrawlTargetSchema>;
export type MonitorSearchTarget = z.output<typeof monitorSearchTargetSchema>;

const monitorNotificationSchema = z.strictObject({
  email: z
    .strictObject({
      enabled: z.boolean().optional(),
      recipients: z.array(z.email()).max(25).optional(),
      includeDiffs: z.boolean().optional(),
    })
    .optional(),
});

const clientTags = { origin: z.string().max(200).optional(), integration: z.string().max(200).nullable().optional() };

const monitorFields = {
  name: z.string().trim().min(1).max(256),
  schedule: monitorScheduleSchema,
  webhook: monitorWebhookSchema.nullable().optional(),
  notification: monitorNotificationSchema.nullable().optional(),
  targets: z.array(monitorTargetSchema).min(1, 'targets must contain at least one target').max(50),
  retentionDays: z.int().min(1).max(365).optional(),
  goal: z.string().max(2_000).nullable().optional(),
  judgeEnabled: z.boolean().optional(),
};

/** A search target needs a non-empty goal unless judging is off (the docs' rule). */
function goalRule(o: { targets?: MonitorTarget[] | undefined; goal?: string | null | undefined; judgeEnabled?: boolean | undefined }, ctx: z.RefinementCtx) {
  if (!o.targets?.some((t) => t.type === 'search')) return;
  if (o.judgeEnabled === false || (o.goal && o.goal.trim())) return;
  ctx.addIssue({ code: 'custom', path: ['goal'], message: 'a search target needs a non-empty goal (or judgeEnabled: false)' });
}

export const monitorCreateRequestSchema = z.strictObject({ ...monitorFields, ...clientTags }).superRefine(goalRule);
export type MonitorCreateRequest = z.output<typeof monitorCreateRequestSchema>;

export const monitorUpdateRequestSchema = z
  .strictObject({
    name: monitorFields.name.optional(),
    schedule: monitorScheduleSchema.optional(),
    webhook: monitorFields.webhook,
    notification: monitorFields.notification,
    targets: monitorFields.targets.optional(),
    retentionDays: monitorFields.retentionDays,
    goal: monitorFields.goal,
    judgeEnabled: monitorFields.judgeEnabled,
    status: z.enum(['active', 'paused']).optional(),
    ...clientTags,
  })
  .refine((o) => Object.keys(o).some((k) => k !== 'origin' && k !== 'integration'), { message: 'include at least one field to update' });
export type MonitorUpdateRequest = z.output<typeof monitorUpdateRequestSchema>;

/** POST /v2/monitor/{id}/recipients/resend: another confirmation email to one of the monitor's recipients. */
export const monitorRecipientResendRequestSchema = z.strictObject({ email: z.email().max(254), ...clientTags });

/** POST /v2/monitor/{id}/run: the JS SDK sends only `origin`. */
export const monitorRunRequestSchema = z.strictObject({ ...clientTags });

// ---- responses ----

const iso = z.string();
export const monitorSummarySchema = z.strictObject({
  totalPages: z.int(), same: z.int(), changed: z.int(), new: z.int(), removed: z.int(), error: z.int(),
});
export type MonitorSummary = z.output<typeof monitorSummarySchema>;

export const MONITOR_CHECK_STATUSES = ['queued', 'running', 'completed', 'failed', 'partial', 'skipped_overlap', 'skipped_no_credits'] as const;
export type MonitorCheckStatus = (typeof MONITOR_CHECK_STATUSES)[number];
export const MONITOR_PAGE_STATUSES = ['same', 'new', 'changed', 'removed', 'error'] as const;
export type MonitorPageStatus = (typeof MONITOR_PAGE_STATUSES)[number];

export const MONITOR_RECIPIENT_STATUSES = ['pending', 'confirmed', 'unsubscribed'] as const;
/**
 * A recipient's opt-in (the JS SDK's MonitorEmailRecipientSubscription): `pending` until the
 * address follows its confirmation email's link, then `confirmed`; `unsubscribed` after the
 * unsubscribe link of any monitor email. Per team and address: one confirmation serves every
 * monitor of the team. `source` is `opt_in` (named by a create/update) or `legacy` (named by a
 * monitor made before opt-in existed); `team` (members, auto-confirmed) never occurs here, as this
 * deployment keeps no member addresses.
 */
export const monitorRecipientSubscriptionSchema = z.strictObject({
  email: z.string(),
  status: z.enum(MONITOR_RECIPIENT_STATUSES),
  source: z.enum(['team', 'opt_in', 'legacy']),
  confirmationEmailSent: z.boolean().optional(),
});

export const monitorSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  status: z.enum(['active', 'paused', 'deleted']),
  schedule: z.strictObject({ cron: z.string(), timezone: z.string(), text: z.string().optional() }),
  nextRunAt: iso.nullable(),
  lastRunAt: iso.nullable(),
  currentCheckId: z.string().nullable(),
  targets: z.array(z.looseObject({ id: z.string(), type: z.enum(['scrape', 'crawl', 'search']) })),
  webhook: z.looseObject({ url: z.string() }).nullable(),
  notification: z.looseObject({}).nullable(),
  /** Every explicit email recipient's opt-in state, in the order of `notification.email.recipients`; absent without recipients. */
  emailRecipientSubscriptions: z.array(monitorRecipientSubscriptionSchema).optional(),
  retentionDays: z.int(),
  estimatedCreditsPerMonth: z.int().nullable(),
  lastCheckSummary: monitorSummarySchema.nullable(),
  goal: z.string().nullable(),
  judgeEnabled: z.boolean(),
  createdAt: iso,
  updatedAt: iso,
});

export const monitorCheckSchema = z.strictObject({
  id: z.string(),
  monitorId: z.string(),
  status: z.enum(MONITOR_CHECK_STATUSES),
  trigger: z.enum(['scheduled', 'manual']),
  scheduledFor: iso.nullable(),
  startedAt: iso.nullable(),
  finishedAt: iso.nullable(),
  estimatedCredits: z.int().nullable(),
  reservedCredits: z.int().nullable(),
  actualCredits: z.int().nullable(),
  billingStatus: z.enum(['not_applicable', 'reserved', 'confirmed', 'released', 'failed']),
  summary: monitorSummarySchema,
  targetResults: z.array(z.looseObject({ targetId: z.string(), type: z.string() })).nullable(),
  notificationStatus: z.looseObject({}).nullable(),
  error: z.string().nullable(),
  createdAt: iso,
  updatedAt: iso,
});

/** The goal judge's verdict on a changed page or a new search result (Firecrawl's MonitorPageJudgment). */
export const monitorJudgmentSchema = z.strictObject({
  meaningful: z.boolean(),
  confidence: z.enum(['high', 'medium', 'low']),
  reason: z.string(),
  meaningfulChanges: z.array(z.strictObject({ type: z.enum(['added', 'removed', 'changed']), before: z.string().nullable(), after: z.string().nullable(), reason: z.string() })),
});
export type MonitorJudgment = z.output<typeof monitorJudgmentSchema>;

export const monitorCheckPageSchema = z.strictObject({
  id: z.string(),
  targetId: z.string(),
  url: z.string(),
  status: z.enum(MONITOR_PAGE_STATUSES),
  previousScrapeId: z.string().nullable(),
  currentScrapeId: z.string().nullable(),
  statusCode: z.int().nullable(),
  error: z.string().nullable(),
  metadata: z.looseObject({}).nullable(),
  diff: z.strictObject({ text: z.string().optional(), json: z.looseObject({}).optional() }).nullable(),
  snapshot: z.strictObject({ json: z.unknown().optional() }).nullable(),
  judgment: monitorJudgmentSchema.nullable(),
  createdAt: iso,
});

export const monitorResponseSchema = z.strictObject({ success: z.literal(true), data: monitorSchema });
export const monitorListResponseSchema = z.strictObject({ success: z.literal(true), data: z.array(monitorSchema) });
export const monitorDeletedResponseSchema = z.strictObject({ success: z.literal(true) });
export const monitorRecipientResponseSchema = z.strictObject({ success: z.literal(true), data: monitorRecipientSubscriptionSchema });
/** What a followed (POSTed) confirm or unsubscribe link answers as JSON (browsers get an HTML page): the address masked, nothing of the team. */
export const monitorRecipientLinkResponseSchema = z.strictObject({
  success: z.literal(true),
  data: z.strictObject({ status: z.enum(['confirmed', 'unsubscribed']), email: z.string(), alreadyDone: z.boolean() }),
});
/** What a GET of a link answers before it was followed (a GET changes nothing; POST the same URL to do it). */
export const monitorRecipientLinkAskSchema = z.strictObject({
  success: z.literal(true),
  data: z.strictObject({ action: z.enum(['confirm', 'unsubscribe']), email: z.string(), alreadyDone: z.literal(false), message: z.string() }),
});
/** A GET of a link: what it would do, or (already done) the same answer as its POST. */
export const monitorRecipientLinkViewSchema = z.union([monitorRecipientLinkAskSchema, monitorRecipientLinkResponseSchema]);
export const monitorRunResponseSchema = z.strictObject({ success: z.literal(true), id: z.string(), data: monitorCheckSchema });
export const monitorCheckListResponseSchema = z.strictObject({ success: z.literal(true), data: z.array(monitorCheckSchema) });
export const monitorCheckDetailResponseSchema = z.strictObject({
  success: z.literal(true),
  next: z.string().nullable(),
  data: monitorCheckSchema.extend({ pages: z.array(monitorCheckPageSchema), next: z.string().nullable() }),
});

/** The crawl and search targets of a monitor: each check runs them (a crawl job, the queries) before its pages. */
export function runTargetsOf(targets: readonly Record<string, unknown>[]): { targetId: string; type: 'crawl' | 'search' }[] {
  return targets.flatMap((t) => (t.type === 'crawl' || t.type === 'search' ? [{ targetId: String(t.id), type: t.type }] : []));
}

/** The pages a check of these targets starts with: every URL of every scrape target, once per target (crawl and search targets find theirs). */
export function checkPagesOf(targets: readonly Record<string, unknown>[]): { targetId: string; url: string; urlKey: string }[] {
  const out: { targetId: string; url: string; urlKey: string }[] = [];
  for (const t of targets) {
    if (t.type !== 'scrape' || !Array.isArray(t.urls)) continue;
    const seen = new Set<string>();
    for (const url of t.urls as string[]) {
      const urlKey = crawlUrlKey(url);
      if (seen.has(urlKey)) continue;
      seen.add(urlKey);
      out.push({ targetId: String(t.id), url, urlKey });
    }
  }
  return out;
}
