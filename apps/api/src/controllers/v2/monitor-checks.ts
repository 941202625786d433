import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { checkPagesOf, MONITOR_CHECK_STATUSES, MONITOR_PAGE_STATUSES, monitorRunRequestSchema, runTargetsOf } from '@wds/contracts';
import { checkPages, claimManualCheck, endMonitorRunChecks, listMonitorChecks, loadMonitorCheck, teamCreditBalance, getTeamLimits } from '@wds/db';
import { WdsError } from '@wds/errors';
import { monitorRunJob } from '@wds/workflows/job-specs';
import type { ApiDeps } from '../../deps';
import { noteLogIds } from '../../logging';
import { baseUrl } from '../../services/base-url';
import { startJob } from '../../services/jobs';
import { pageQuery, teamMonitor, UUID, type IdReq, type MonitorConfig } from './monitor-shared';
import { checkPageView, checkView } from './monitor-view';
import { validateBody } from './validate';

/** A monitor's checks: run now (POST /v2/monitor/{id}/run), list, and one check with its pages. */
export function monitorCheckRoutes(deps: ApiDeps, cfg: MonitorConfig) {
  return async (app: FastifyInstance) => {
    app.post('/monitor/:id/run', run(deps, cfg));
    app.get('/monitor/:id/checks', list(deps));
    app.get('/monitor/:id/checks/:checkId', get(deps, cfg));
  };
}

function statusQuery(v: string | undefined, allowed: readonly string[]): string | undefined {
  if (v === undefined || v === '') return undefined;
  if (!allowed.includes(v)) throw new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_value', path: ['status'], message: `status must be one of ${allowed.join(', ')}` }] });
  return v;
}

/**
 * Run now: the monitor's running-check slot is taken in Postgres (a check running, or a paused
 * monitor: 409, naming the running check), then the run's workflow is started directly — a
 * Schedule's trigger would overlap freely. Temporal refusing the start ends the check at once.
 */
function run(deps: ApiDeps, cfg: MonitorConfig) {
  return async (req: IdReq, reply: FastifyReply) => {
    const m = await teamMonitor(deps, req);
    validateBody(monitorRunRequestSchema, req.body ?? {});
    if (m.status === 'paused') throw new WdsError('CONFLICT', { message: 'The monitor is paused: resume it (status: active) to run it.', code: 'MONITOR_PAUSED' });
    const limits = await getTeamLimits(deps.db, req.auth.teamId);
    if (limits.creditLimit !== null) {
      const b = await teamCreditBalance(deps.db, req.auth.teamId);
      if (b.used + b.reserved >= limits.creditLimit) throw new WdsError('PAYMENT_REQUIRED');
    }
    const runId = randomUUID();
    const targets = runTargetsOf(m.targets).map((t) => ({ ...t, jobId: t.type === 'crawl' ? randomUUID() : null }));
    const claim = await claimManualCheck(deps.db, { teamId: req.auth.teamId, monitorId: m.id, runId, checkId: randomUUID(), pages: checkPagesOf(m.targets), targets });
    if (!claim.started) {
      if (claim.reason === 'running') throw new WdsError('CONFLICT', { message: `A check of this monitor is running (${claim.checkId}).`, code: 'MONITOR_CHECK_RUNNING', details: { checkId: claim.checkId } });
      if (claim.reason === 'paused') throw new WdsError('CONFLICT', { message: 'The monitor is paused: resume it (status: active) to run it.', code: 'MONITOR_PAUSED' });
      throw new WdsError('NOT_FOUND', { message: 'Monitor not found' });
    }
    noteLogIds(req, { jobId: claim.checkId });
    await startJob(deps, monitorRunJob, {
      jobId: runId,
      args: [claim.targets ? { runId, plan: cfg.plan, targets: true } : { runId, plan: cfg.plan }],
      // The run's end, not only its row: the check fails and the monitor's slot is freed.
      fail: () => endMonitorRunChecks(deps.db, runId, 'failed', 'The check could not be started (the workflow service did not accept it).'),
    }).catch((e: unknown) => {
      throw new WdsError('SERVICE_UNAVAILABLE', { message: 'Service Unavailable: the check could not be started (the workflow service did not accept it). Retry later.', cause: e });
    });
    const k = await loadMonitorCheck(deps.db, m.id, claim.checkId);
    return reply.send({ success: true, id: claim.checkId, data: checkView(k!) });
  };
}

function list(deps: ApiDeps) {
  return async (req: IdReq, reply: FastifyReply) => {
    const m = await teamMonitor(deps, req);
    const { limit, offset } = pageQuery(req.query);
    const status = statusQuery(req.query.status, MONITOR_CHECK_STATUSES);
    const rows = await listMonitorChecks(deps.db, m.id, { limit, offset, ...(status ? { status } : {}) });
    return reply.send({ success: true, data: rows.map(checkView) });
  };
}

function get(deps: ApiDeps, cfg: MonitorConfig) {
  return async (req: IdReq, reply: FastifyReply) => {
    const m = await teamMonitor(deps, req);
    const checkId = req.params.checkId!;
    if (!UUID.test(checkId)) throw new WdsError('BAD_REQUEST', { message: 'Invalid check ID format. Check ID must be a valid UUID.' });
    const k = await loadMonitorCheck(deps.db, m.id, checkId);
    if (!k) throw new WdsError('NOT_FOUND', { message: 'Monitor check not found' });
    const { limit, offset: skip } = pageQuery(req.query, 'skip');
    const status = statusQuery(req.query.status, MONITOR_PAGE_STATUSES);
    const rows = await checkPages(deps.db, k.id, { limit: limit + 1, skip, ...(status ? { status } : {}) });
    const more = rows.length > limit;
    const q = new URLSearchParams({ skip: String(skip + limit), limit: String(limit), ...(status ? { status } : {}) });
    const next = more ? `${baseUrl(req, cfg.publicUrl)}/v2/monitor/${m.id}/checks/${k.id}?${q}` : null;
    return reply.send({ success: true, next, data: { ...checkView(k), pages: rows.slice(0, limit).map(checkPageView), next } });
  };
}
