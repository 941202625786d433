import type { FastifyRequest } from 'fastify';
import { loadTeamMonitor, type MonitorRow } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { CrawlPlan } from '@wds/workflows/crawl';
import type { ApiDeps } from '../../deps';
import { requireScope } from '../../middleware/auth';

/** What the monitor controllers (monitor.ts, monitor-checks.ts) share: settings, the monitor of a path, list paging. */
export interface MonitorConfig {
  /** WDS_MONITOR_MIN_INTERVAL_SECONDS (300: Firecrawl's 5-minute floor; tests lower it). */
  minIntervalSeconds: number;
  /** WDS_MONITOR_JITTER_MS: the most a monitor's due time is spread past its cron time (workers use the same). */
  jitterMs: number;
  /** How a "run now" run fetches its pages. */
  plan: CrawlPlan;
  publicUrl?: string;
  /** How crawl targets' crawls run (the deployment's crawl settings, as POST /v2/crawl uses them). */
  crawl?: { defaultConcurrency: number; batchesPerRun?: number; maxCrawlLimit?: number };
  /** An SMTP server is configured (WDS_SMTP_URL): email summaries can be sent. */
  email?: boolean;
  /** WDS_MONITOR_CONFIRM_RESEND_SECONDS in ms: at most one confirmation email per address and team this often. */
  resendAfterMs?: number;
  /**
   * The team's bound on addresses awaiting confirmation (WDS_MONITOR_MAX_PENDING_RECIPIENTS), and
   * how long a sent invitation counts (its link's lifetime, WDS_MONITOR_CONFIRM_TTL_SECONDS, in ms).
   */
  pendingRecipients: { max: number; liveMs: number };
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export type IdReq = FastifyRequest<{ Params: { id: string; checkId?: string }; Querystring: Record<string, string | undefined> }>;

/** The team's monitor named by the path, or 404 (400 for an id that is not a UUID). */
export async function teamMonitor(deps: ApiDeps, req: IdReq): Promise<MonitorRow> {
  requireScope(req, 'monitor');
  if (!UUID.test(req.params.id)) throw new WdsError('BAD_REQUEST', { message: 'Invalid monitor ID format. Monitor ID must be a valid UUID.' });
  const m = await loadTeamMonitor(deps.db, req.auth.teamId, req.params.id);
  if (!m) throw new WdsError('NOT_FOUND', { message: 'Monitor not found' });
  return m;
}

/** `limit` (1–100, default 25) and `offset` (≥ 0) of a list. */
export function pageQuery(q: Record<string, string | undefined>, offsetName: 'offset' | 'skip' = 'offset'): { limit: number; offset: number } {
  const num = (name: string, v: string | undefined, min: number, max: number, dflt: number) => {
    if (v === undefined) return dflt;
    // Digits only, as the OpenAPI pattern says: Number('') is 0 and Number(' 1e2') 100.
    const n = /^[0-9]{1,10}$/.test(v) ? Number(v) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) throw new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_value', path: [name], message: `${name} must be an integer from ${min} to ${max}` }] });
    return n;
  };
  return { limit: num('limit', q.limit, 1, 100, 25), offset: num(offsetName, q[offsetName], 0, 1_000_000_000, 0) };
}
