import type { FastifyInstance, FastifyRequest } from 'fastify';
import { auditMetadataOf, type AuditMetadata } from '@wds/contracts';
import { forgetInLogs, urlForms, type LogIds } from '@wds/log';

declare module 'fastify' {
  interface FastifyRequest {
    /** Ids of the job this request created or read, for its log lines. */
    logIds?: LogIds;
    /** Ends the hiding of a zero-data-retention URL (forgetUrlInLogs). */
    forgetRelease?: () => void;
    /** auditMetadata of a body that is not JSON (parse's multipart options), for the request line. */
    auditMetadata?: AuditMetadata;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Probes and scrapes of /metrics would drown the request log at info. */
const QUIET_ROUTES = new Set(['/health', '/ready', '/metrics']);

/** Notes the ids of the job a request created, for its request line and any error line. */
export function noteLogIds(req: FastifyRequest, ids: LogIds): void {
  req.logIds = { ...req.logIds, ...ids };
}

/** The ids a request's log lines carry: its team, and the job it created or names in its path. */
export function logIdsOf(req: FastifyRequest): LogIds {
  const ids: LogIds = { ...(req.auth?.teamId ? { teamId: req.auth.teamId } : {}), ...req.logIds };
  // Status, cancel and errors of a job name it in the path.
  const id = (req.params as { id?: unknown } | undefined)?.id;
  if (typeof id === 'string' && UUID.test(id) && !ids.jobId && !ids.scrapeId) {
    if ((req.routeOptions.url ?? '').startsWith('/v2/scrape/')) ids.scrapeId = id;
    else ids.jobId = id;
  }
  return ids;
}

/**
 * A zero-data-retention or lockdown request: its URL must not reach any log line of this
 * process, even an error logged after the handler returned. Released when the response is sent.
 */
export function forgetUrlInLogs(req: FastifyRequest, url: string): void {
  const release = forgetInLogs(urlForms(url));
  req.forgetRelease = release;
  // Normally released by the request line (installRequestLog); a request that never gets one
  // (its client went away) must not keep the entry for ever.
  setTimeout(release, 15 * 60_000).unref();
}

/**
 * One line per request when its response is sent: method, route pattern (never the URL, whose
 * query may hold credentials), status, duration, the team and the job ids, and the caller's
 * `auditMetadata` when the body has one. The request's body is otherwise never logged.
 */
export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? '(no route)';
    const line: Record<string, unknown> = { method: req.method, route, status: reply.statusCode, durationMs: Math.round(reply.elapsedTime), ...logIdsOf(req) };
    // The caller's audit attribution (auditMetadata, validated shape only) goes with the request's line.
    const audit = req.auditMetadata ?? auditMetadataOf(req.body);
    if (audit) line.auditMetadata = audit;
    if (QUIET_ROUTES.has(route)) req.log.debug(line, 'request');
    else req.log.info(line, 'request');
    // After the line is written: until then the URL of a zero-data-retention request stays hidden.
    req.forgetRelease?.();
  });
}
