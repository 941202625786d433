import { sql } from 'drizzle-orm';
import { bigserial, boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, smallint, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { jobs } from './jobs';
import { teams } from './teams';

/**
 * Monitors (packages/db/src/monitors.ts). Postgres is the source of truth of every monitor's
 * schedule, pause state, next due time and running-check slot; Temporal Schedules only tick
 * (one per shard), and each tick claims the monitors that are due.
 */
export const monitors = pgTable(
  'monitors',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    status: text('status').$type<'active' | 'paused' | 'deleted'>().notNull().default('active'),
    /** Normalized schedule: {cron, timezone, text?}. */
    schedule: jsonb('schedule').$type<{ cron: string; timezone: string; text?: string }>().notNull(),
    /** Targets as the request gave them, each with its id. */
    targets: jsonb('targets').$type<Record<string, unknown>[]>().notNull(),
    webhook: jsonb('webhook').$type<{ url: string; headers?: Record<string, string>; metadata?: Record<string, unknown>; events?: string[] } | null>(),
    notification: jsonb('notification'),
    retentionDays: integer('retention_days').notNull().default(30),
    goal: text('goal'),
    judgeEnabled: boolean('judge_enabled').notNull().default(false),
    zeroDataRetention: boolean('zero_data_retention').notNull().default(false),
    estimatedCreditsPerMonth: integer('estimated_credits_per_month'),
    /** 0…4095 from the id: a tick of shard s of n claims monitors with shard_key % n = s. */
    shardKey: smallint('shard_key').notNull(),
    /** When the monitor is next due (cron + its jitter); null while paused or deleted. */
    nextRunAt: timestamp('next_run_at', { withTimezone: true }),
    lastRunAt: timestamp('last_run_at', { withTimezone: true }),
    /** The running-check slot: the check running now (a due time meanwhile records skipped_overlap). */
    runningCheckId: uuid('running_check_id'),
    lastCheckSummary: jsonb('last_check_summary'),
    /**
     * Crawl targets as the API resolved them (the crawl schema's options with defaults, the page
     * limit and the crawl plan), by target id: a check's crawl job is created from these.
     */
    crawlSpecs: jsonb('crawl_specs').$type<Record<string, unknown>>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('monitors_team_idx').on(t.teamId, t.createdAt),
    index('monitors_due_idx').on(t.nextRunAt).where(sql`status = 'active'`),
  ],
);

/** One check of a monitor: what ran (or why it did not) and its summary, written when it ends. */
export const monitorChecks = pgTable(
  'monitor_checks',
  {
    id: uuid('id').primaryKey(),
    monitorId: uuid('monitor_id').notNull().references(() => monitors.id, { onDelete: 'cascade' }),
    teamId: uuid('team_id').notNull(),
    /** The run (frontier job) whose workflow runs this check; null for skipped checks. */
    runId: uuid('run_id'),
    status: text('status').$type<'queued' | 'running' | 'completed' | 'failed' | 'partial' | 'skipped_overlap' | 'skipped_no_credits'>().notNull(),
    trigger: text('trigger').$type<'scheduled' | 'manual'>().notNull(),
    scheduledFor: timestamp('scheduled_for', { withTimezone: true }),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    estimatedCredits: integer('estimated_credits'),
    actualCredits: integer('actual_credits'),
    billingStatus: text('billing_status').$type<'not_applicable' | 'reserved' | 'confirmed' | 'released' | 'failed'>().notNull().default('not_applicable'),
    /** {totalPages, same, changed, new, removed, error}, written when the check ends. */
    summary: jsonb('summary'),
    targetResults: jsonb('target_results').$type<Record<string, unknown>[]>(),
    /** Crawl and search targets not yet collected: the check ends only when none is left (and no page waits). */
    pendingTargets: integer('pending_targets').notNull().default(0),
    /** The check has crawl or search targets (monitor_check_targets rows): their results are summed at its end. */
    hasTargets: boolean('has_targets').notNull().default(false),
    /** Credits of the check's targets that are no page's (a search call: 2 per 10 results). */
    targetCredits: integer('target_credits').notNull().default(0),
    /** Email summary state ({email: {status, recipients, sentAt?, error?}}), written by the mailer. */
    notificationStatus: jsonb('notification_status'),
    error: text('error'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('monitor_checks_monitor_idx').on(t.monitorId, t.createdAt), index('monitor_checks_run_idx').on(t.runId)],
);

/**
 * One page of one check: its frontier row while it waits (queued → leased, claimed by the run's
 * batch activities like crawl URLs) and then its result (same, new, changed, removed, error).
 * An unchanged page refers to the version it matched; nothing is copied.
 */
export const monitorCheckPages = pgTable(
  'monitor_check_pages',
  {
    checkId: uuid('check_id').notNull().references(() => monitorChecks.id, { onDelete: 'cascade' }),
    targetId: text('target_id').notNull(),
    urlKey: text('url_key').notNull(),
    url: text('url').notNull(),
    id: uuid('id').notNull().default(sql`gen_random_uuid()`),
    runId: uuid('run_id'),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    /**
     * queued → leased (a fetch batch) → a result; or → llm (the page waits for its model step:
     * json mode's extraction, the goal judge; `pending` holds what the step reads) → a result.
     */
    status: text('status').$type<'queued' | 'leased' | 'llm' | 'same' | 'new' | 'changed' | 'removed' | 'error'>().notNull().default('queued'),
    /** page: a scrape target's URL or a crawled page; hidden: a crawl target's page known from earlier checks that no page links to now; search: a search result to judge. */
    kind: text('kind').$type<'page' | 'hidden' | 'search'>().notNull().default('page'),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    attempts: integer('attempts').notNull().default(0),
    statusCode: integer('status_code'),
    error: text('error'),
    previousScrapeId: uuid('previous_scrape_id'),
    currentScrapeId: uuid('current_scrape_id'),
    metadata: jsonb('metadata'),
    diff: jsonb('diff'),
    snapshot: jsonb('snapshot'),
    judgment: jsonb('judgment'),
    /** What the model step reads (the observation, search result fields); cleared when the page ends. */
    pending: jsonb('pending'),
    /** When the page's model step started failing (its patience runs from here). */
    failingSince: timestamp('failing_since', { withTimezone: true }),
    credits: integer('credits').notNull().default(0),
    /** Part of `credits` billed by another job (a crawl target's crawl bills its pages): counted, not charged again. */
    prepaidCredits: integer('prepaid_credits').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.checkId, t.targetId, t.urlKey] }),
    index('monitor_check_pages_claim_idx').on(t.runId, t.seq).where(sql`status IN ('queued', 'leased', 'llm')`),
    index('monitor_check_pages_order_idx').on(t.checkId, t.seq),
  ],
);

/**
 * A run: the frontier job of the checks one tick (or one "run now") started; its workflow runs
 * their pages. A check with crawl or search targets gets a run of its own (`targets`), whose
 * workflow first runs those targets. The extension of its `jobs` row (kind monitor_run, team
 * NULL: a run holds checks of several teams), which has its status, times and expiry.
 */
export const monitorRuns = pgTable(
  'monitor_runs',
  {
    id: uuid('id').primaryKey().references(() => jobs.id, { onDelete: 'cascade' }),
    kind: text('kind').$type<'scheduled' | 'manual'>().notNull(),
    checks: integer('checks').notNull().default(0),
    /** The run's checks have crawl or search targets: its workflow runs them before the page frontier. */
    targets: boolean('targets').notNull().default(false),
    /** The tick claim that made this run beside its own (a retried claim finds them by it). */
    claimId: uuid('claim_id'),
  },
  (t) => [index('monitor_runs_claim_idx').on(t.claimId)],
);

/**
 * A crawl or search target of one check: what its run's workflow runs before the page
 * frontier (a crawl job, `job_id`; or the target's queries), until collected into the check's pages.
 */
export const monitorCheckTargets = pgTable(
  'monitor_check_targets',
  {
    checkId: uuid('check_id').notNull().references(() => monitorChecks.id, { onDelete: 'cascade' }),
    targetId: text('target_id').notNull(),
    runId: uuid('run_id').notNull(),
    type: text('type').$type<'crawl' | 'search'>().notNull(),
    /** The crawl job of a crawl target (made at the claim, created by the run). */
    jobId: uuid('job_id'),
    status: text('status').$type<'pending' | 'collected'>().notNull().default('pending'),
    /** The check's targetResults entry (the JS SDK's MonitorCrawlTargetResult / MonitorSearchTargetResult). */
    result: jsonb('result').$type<Record<string, unknown>>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.checkId, t.targetId] }),
    index('monitor_check_targets_run_idx').on(t.runId),
    // The team's crawl list leaves monitor crawls out by this column (crawl-jobs.ts activeCrawls).
    index('monitor_check_targets_job_idx').on(t.jobId).where(sql`${t.jobId} IS NOT NULL`),
  ],
);

/**
 * A check's email summary (notification.email), an outbox row the control workers' mailer
 * sends through SMTP, retried with backoff; written by the statement that ends the check.
 */
export const monitorEmails = pgTable(
  'monitor_emails',
  {
    checkId: uuid('check_id').primaryKey().references(() => monitorChecks.id, { onDelete: 'cascade' }),
    monitorId: uuid('monitor_id').notNull(),
    teamId: uuid('team_id').notNull(),
    status: text('status').$type<'pending' | 'sent' | 'failed'>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    lastError: text('last_error'),
    /** Recipients (lower case) this summary reached: a retry after a failed send skips them. */
    sentTo: text('sent_to').array().notNull().default(sql`'{}'::text[]`),
    sentAt: timestamp('sent_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('monitor_emails_due_idx').on(t.nextAttemptAt).where(sql`status = 'pending'`)],
);

/**
 * A team's email recipients of monitor mail and their opt-in (packages/db/src/monitor-recipients.ts):
 * one row per team and address (lower case), whatever monitors name it. An address gets change
 * summaries only once `confirmed` (it followed the signed link of its confirmation email);
 * `unsubscribed` stops all of the team's monitor mail to it. The row is also the outbox of its
 * confirmation email (`confirm_due`), which control workers' mailer sends.
 */
export const monitorEmailRecipients = pgTable(
  'monitor_email_recipients',
  {
    id: uuid('id').primaryKey().default(sql`gen_random_uuid()`),
    teamId: uuid('team_id').notNull().references(() => teams.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    status: text('status').$type<'pending' | 'confirmed' | 'unsubscribed'>().notNull().default('pending'),
    /** opt_in: named by a create or update; legacy: named by a monitor made before opt-in existed (found by the mailer). */
    source: text('source').$type<'opt_in' | 'legacy' | 'team'>().notNull().default('opt_in'),
    /** Confirmation links carry it; a new confirmation flow (after an unsubscribe) bumps it, so older links stop working. */
    nonce: integer('nonce').notNull().default(0),
    /** The monitor whose create/update asked for the latest confirmation (named in the email). */
    monitorId: uuid('monitor_id'),
    confirmDue: boolean('confirm_due').notNull().default(false),
    confirmAttempts: integer('confirm_attempts').notNull().default(0),
    confirmNextAttemptAt: timestamp('confirm_next_attempt_at', { withTimezone: true }),
    /** When a confirmation email was last asked for: resends and re-adds are rate-limited from here. */
    confirmRequestedAt: timestamp('confirm_requested_at', { withTimezone: true }),
    confirmSentAt: timestamp('confirm_sent_at', { withTimezone: true }),
    confirmError: text('confirm_error'),
    confirmedAt: timestamp('confirmed_at', { withTimezone: true }),
    unsubscribedAt: timestamp('unsubscribed_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('monitor_email_recipients_team_email_idx').on(t.teamId, t.email),
    index('monitor_email_recipients_due_idx').on(t.confirmNextAttemptAt).where(sql`confirm_due`),
  ],
);

/**
 * Each team's budget of confirmation emails (monitor-mail-budget.ts): a token bucket, `tokens` as
 * of `refilled_at`, refilled at the operator's rate up to its capacity. A confirmation email is the
 * only mail that goes to an address that has not opted in, so this bounds what a team can make the
 * operator's SMTP server send to strangers.
 */
export const monitorMailBudgets = pgTable('monitor_mail_budgets', {
  teamId: uuid('team_id').primaryKey().references(() => teams.id, { onDelete: 'cascade' }),
  tokens: doublePrecision('tokens').notNull(),
  refilledAt: timestamp('refilled_at', { withTimezone: true }).notNull().defaultNow(),
});
