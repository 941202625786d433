import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { monitorCreateRequestSchema, monitorUpdateRequestSchema } from '@wds/contracts';
import { averageIntervalSeconds, compileCron, nextDueAt, normalizeSchedule, spreadOf, type NormalizedSchedule, type ScheduleInput } from '@wds/contracts/monitor-schedule';
import { inTransaction, insertMonitor, listTeamMonitors, updateTeamMonitor, type MonitorRow, type NewMonitor } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { MonitorCrawlSpec } from '@wds/workflows/monitor';
import type { ApiDeps } from '../../deps';
import { noteLogIds } from '../../logging';
import { requireScope } from '../../middleware/auth';
import type { TeamLimitsReader } from '../../middleware/limits';
import { checkMonitorRoom } from '../../services/team-caps';
import { monitorCheckRoutes } from './monitor-checks';
import { pageQuery, teamMonitor, type IdReq, type MonitorConfig } from './monitor-shared';
import { checkNotification, creditsPerCheck, resolveTargets } from './monitor-targets';
import { monitorView } from './monitor-view';
import { enlistNewRecipients, resendConfirmation, subscriptionsOf, subscriptionsView } from './monitor-recipients';
import { validateBody } from './validate';

/**
 * Monitors (POST/GET /v2/monitor, GET/PATCH/DELETE /v2/monitor/{id}; checks in
 * monitor-checks.ts). The API validates and stores the monitor with its next due time; the
 * workers' shared tick Schedules claim it when due. Reads are team-scoped: another team's
 * monitor is "not found".
 */
const MONTH_SECONDS = 30 * 24 * 3600;

export function monitorRoutes(deps: ApiDeps, cfg: MonitorConfig, limitsOf: TeamLimitsReader) {
  return async (app: FastifyInstance) => {
    app.post('/monitor', create(deps, cfg, limitsOf));
    app.get('/monitor', list(deps));
    app.get('/monitor/:id', get(deps));
    app.patch('/monitor/:id', update(deps, cfg));
    app.delete('/monitor/:id', remove(deps));
    app.post('/monitor/:id/recipients/resend', resendConfirmation(deps, cfg));
    await app.register(monitorCheckRoutes(deps, cfg));
  };
}

function scheduleOf(s: ScheduleInput, monitorId: string, cfg: MonitorConfig): NormalizedSchedule {
  const r = normalizeSchedule(s, monitorId, cfg.minIntervalSeconds);
  if ('problems' in r) throw new WdsError('BAD_REQUEST', { details: r.problems.map((p) => ({ code: 'invalid_schedule', path: p.path, message: p.message })) });
  return r.schedule;
}

/** The request's targets as it sent them (defaults left out), each with its id (given, or made stable from the monitor id and position). */
function targetsOf(raw: unknown, monitorId: string): Record<string, unknown>[] {
  return (raw as Record<string, unknown>[]).map((t, i) => ({ ...t, id: typeof t.id === 'string' ? t.id : uuidFrom(monitorId, i) }));
}

function uuidFrom(monitorId: string, i: number): string {
  const h = (n: number) => spreadOf(monitorId, `target:${i}:${n}`, 0x10000).toString(16).padStart(4, '0');
  return `${h(0)}${h(1)}-${h(2)}-4${h(3).slice(1)}-8${h(4).slice(1)}-${h(5)}${h(6)}${h(7)}`;
}

/** Credits a month at most: a check's upper bound (creditsPerCheck) at the schedule's average rate. */
function monthlyEstimate(schedule: NormalizedSchedule, targets: Record<string, unknown>[], judge: boolean, specs: Record<string, MonitorCrawlSpec>): number | null {
  const c = compileCron(schedule.cron);
  if (typeof c === 'string') return null;
  return Math.round((creditsPerCheck(targets, judge, specs) * MONTH_SECONDS) / averageIntervalSeconds(c));
}

const judging = (goal: string | null | undefined, judgeEnabled: boolean) => judgeEnabled && !!goal?.trim();

function create(deps: ApiDeps, cfg: MonitorConfig, limitsOf: TeamLimitsReader) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'monitor');
    const body = validateBody(monitorCreateRequestSchema, req.body);
    checkNotification(cfg, body.notification);
    const id = randomUUID();
    noteLogIds(req, { jobId: id });
    const schedule = scheduleOf(body.schedule, id, cfg);
    const { targets, crawlSpecs } = await resolveTargets(deps, req, cfg, body.targets, targetsOf((req.body as { targets: unknown }).targets, id));
    const zdr = !!req.auth.flags.zeroDataRetention;
    const judgeEnabled = body.judgeEnabled ?? !!body.goal?.trim();
    const limits = await limitsOf(req.auth.teamId);
    // One transaction: a monitor is never stored without its recipients' invitations (nor invitations without it).
    const row = await inTransaction(deps.db, async (tx) => {
      await checkMonitorRoom(tx, req.auth.teamId, limits);
      const inserted = await insertMonitor(tx, {
      id,
      teamId: req.auth.teamId,
      name: body.name,
      schedule,
      targets,
      crawlSpecs,
      webhook: body.webhook ?? null,
      notification: body.notification ?? null,
      retentionDays: body.retentionDays ?? 30,
      goal: body.goal ?? null,
      judgeEnabled,
      zeroDataRetention: zdr,
      estimatedCreditsPerMonth: monthlyEstimate(schedule, targets, judging(body.goal, judgeEnabled), crawlSpecs),
      shardKey: spreadOf(id, 'shard', 4096),
      nextRunAt: nextDueAt(schedule, id, new Date(), cfg.jitterMs),
      });
      await enlistNewRecipients(tx, cfg, inserted, null, inserted.notification);
      return inserted;
    });
    return reply.send({ success: true, data: await withSubscriptions(deps, row) });
  };
}

/** The monitor as the API answers it, with its recipients' opt-in states. */
async function withSubscriptions(deps: ApiDeps, m: MonitorRow) {
  return monitorView(m, subscriptionsView(m, await subscriptionsOf(deps, m.teamId, [m])));
}

function list(deps: ApiDeps) {
  return async (req: FastifyRequest<{ Querystring: Record<string, string | undefined> }>, reply: FastifyReply) => {
    requireScope(req, 'monitor');
    const { limit, offset } = pageQuery(req.query);
    const rows = await listTeamMonitors(deps.db, req.auth.teamId, limit, offset);
    const subs = await subscriptionsOf(deps, req.auth.teamId, rows);
    return reply.send({ success: true, data: rows.map((m) => monitorView(m, subscriptionsView(m, subs))) });
  };
}

function get(deps: ApiDeps) {
  return async (req: IdReq, reply: FastifyReply) => reply.send({ success: true, data: await withSubscriptions(deps, await teamMonitor(deps, req)) });
}

function update(deps: ApiDeps, cfg: MonitorConfig) {
  return async (req: IdReq, reply: FastifyReply) => {
    const m = await teamMonitor(deps, req);
    const body = validateBody(monitorUpdateRequestSchema, req.body);
    if (body.notification !== undefined) checkNotification(cfg, body.notification);
    const set: Partial<NewMonitor> = {};
    if (body.name !== undefined) set.name = body.name;
    if (body.webhook !== undefined) set.webhook = body.webhook;
    if (body.notification !== undefined) set.notification = body.notification;
    if (body.retentionDays !== undefined) set.retentionDays = body.retentionDays;
    if (body.goal !== undefined) set.goal = body.goal;
    if (body.judgeEnabled !== undefined) set.judgeEnabled = body.judgeEnabled;
    else if (body.goal !== undefined) set.judgeEnabled = !!body.goal?.trim();
    const goal = body.goal !== undefined ? body.goal : m.goal;
    const resolved = body.targets ? await resolveTargets(deps, req, cfg, body.targets, targetsOf((req.body as { targets: unknown }).targets, m.id)) : null;
    const targets = resolved?.targets ?? m.targets;
    const crawlSpecs = resolved?.crawlSpecs ?? ((m.crawlSpecs as Record<string, MonitorCrawlSpec> | null) ?? {});
    if (resolved) {
      set.targets = resolved.targets;
      set.crawlSpecs = resolved.crawlSpecs;
    }
    // The search-target goal rule holds for the monitor as it will be, not just the request.
    if (targets.some((t) => t.type === 'search') && !goal?.trim() && (body.judgeEnabled ?? m.judgeEnabled) !== false) {
      throw new WdsError('BAD_REQUEST', { details: [{ code: 'custom', path: ['goal'], message: 'a search target needs a non-empty goal (or judgeEnabled: false)' }] });
    }
    const schedule = body.schedule ? scheduleOf(scheduleUpdate(m.schedule, body.schedule), m.id, cfg) : m.schedule;
    if (body.schedule) set.schedule = schedule;
    const judgeEnabled = set.judgeEnabled ?? m.judgeEnabled;
    if (body.schedule || body.targets || body.goal !== undefined || body.judgeEnabled !== undefined) {
      set.estimatedCreditsPerMonth = monthlyEstimate(schedule, targets, judging(goal, judgeEnabled), crawlSpecs);
    }
    const status = body.status ?? m.status;
    if (body.status) set.status = body.status;
    // Paused: never due. Resumed or rescheduled: due at the next firing from now.
    if (status === 'paused') set.nextRunAt = null;
    else if (body.schedule || (body.status === 'active' && m.status !== 'active')) set.nextRunAt = nextDueAt(schedule, m.id, new Date(), cfg.jitterMs);
    const row = await inTransaction(deps.db, async (tx) => {
      const updated = await updateTeamMonitor(tx, req.auth.teamId, m.id, set);
      if (!updated) throw new WdsError('NOT_FOUND', { message: 'Monitor not found' });
      await enlistNewRecipients(tx, cfg, updated, m.notification, updated.notification);
      return updated;
    });
    return reply.send({ success: true, data: await withSubscriptions(deps, row) });
  };
}

/** A schedule update: a new cron or text replaces the old one; a timezone alone keeps it. */
function scheduleUpdate(old: NormalizedSchedule, s: ScheduleInput): ScheduleInput {
  const timezone = s.timezone ?? old.timezone;
  if (s.cron !== undefined || s.text !== undefined) return { cron: s.cron, text: s.text, timezone };
  return old.text !== undefined ? { text: old.text, timezone } : { cron: old.cron, timezone };
}

function remove(deps: ApiDeps) {
  return async (req: IdReq, reply: FastifyReply) => {
    const m = await teamMonitor(deps, req);
    // Soft: a check still running ends normally (and is billed); nothing schedules it again.
    await updateTeamMonitor(deps.db, req.auth.teamId, m.id, { status: 'deleted', nextRunAt: null });
    return reply.send({ success: true });
  };
}
