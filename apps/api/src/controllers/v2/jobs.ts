import type { FastifyReply, FastifyRequest } from 'fastify';
import { jobErrors, liveCounters, loadTeamCrawlJob, markJobCancelled, markJobDelivered, pageOfDocuments, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { ApiDeps } from '../../deps';
import { requireScope } from '../../middleware/auth';
import { baseUrl } from '../../services/base-url';
import { cancelJob } from '../../services/jobs';
import { batchJob, crawlJob } from '@wds/workflows/job-specs';
import { checkJobId } from './job-id';

/** Status, cancel and errors of crawl and batch-scrape jobs: the same store, the same shapes. */
type Kind = 'crawl' | 'batch';
const NAMES = {
  crawl: { label: 'Crawl', path: 'crawl', scope: 'crawl', spec: crawlJob },
  batch: { label: 'Batch scrape', path: 'batch/scrape', scope: 'scrape', spec: batchJob },
} as const;

type IdReq = FastifyRequest<{ Params: { id: string }; Querystring: { skip?: string } }>;

export async function findTeamJob(deps: ApiDeps, req: IdReq, kind: Kind) {
  requireScope(req, NAMES[kind].scope);
  const { id } = req.params;
  checkJobId(id);
  const job = await loadTeamCrawlJob(deps.db, req.auth.teamId, id, kind);
  if (!job) throw new WdsError('NOT_FOUND', { message: `${NAMES[kind].label} job not found` });
  return job;
}

type JobRow = NonNullable<Awaited<ReturnType<typeof loadTeamCrawlJob>>>;

/**
 * The status body shared by GET and the WebSocket's snapshots. A running job's counters are
 * counted from its frontier and documents; an ended job's were written when it ended.
 */
export async function statusFields(db: Db, job: JobRow) {
  const end = job.completedAt ?? new Date();
  const c = job.status === 'scraping' || !job.completedAt
    ? await liveCounters(db, job.id)
    : { total: Math.max(job.enqueued, job.completed + job.failed), completed: job.completed, creditsUsed: job.creditsUsed };
  return {
    status: job.status,
    total: c.total,
    completed: c.completed,
    creditsUsed: c.creditsUsed,
    expiresAt: job.expiresAt.toISOString(),
    createdAt: job.createdAt.toISOString(),
    ...(job.completedAt ? { completedAt: job.completedAt.toISOString() } : {}),
    duration: Math.round((end.getTime() - job.createdAt.getTime()) / 10) / 100,
    ...('backoff' in c && c.backoff ? { backoff: { pages: c.backoff.pages, retryAt: c.backoff.retryAt.toISOString() } } : {}),
  };
}

export function jobControllers(deps: ApiDeps, kind: Kind, opts: { pageBytes: number; publicUrl?: string }) {
  return {
    /** GET: counters plus a page of documents; `next` only when more documents exist beyond this page. */
    async status(req: IdReq, reply: FastifyReply) {
      const job = await findTeamJob(deps, req, kind);
      // Digits only: Number() would also take '', ' 5', '0x10' and '1e3'.
      const raw = req.query.skip;
      const skip = raw === undefined ? 0 : typeof raw === 'string' && /^[0-9]{1,15}$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isInteger(skip) || skip < 0) throw new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_type', path: ['skip'], message: 'skip must be a non-negative integer' }] });
      const page = await pageOfDocuments(deps.db, job.id, skip, opts.pageBytes);
      const next = page.more ? `${baseUrl(req, opts.publicUrl)}/v2/${NAMES[kind].path}/${job.id}?skip=${skip + page.docs.length}` : null;
      if (job.zeroDataRetention && job.status !== 'scraping' && !page.more) {
        // Zero data retention: the last page of an ended job's results is handed out; once it
        // has gone to the client, nothing of the job is kept (packages/db retention.ts).
        reply.raw.once('finish', () => void markJobDelivered(deps.db, job.id).catch((e) => req.log.warn({ err: e, jobId: job.id }, 'zero data retention: purge after delivery failed; the retention sweep retries')));
      }
      return reply.send({ success: true, ...(await statusFields(deps.db, job)), next, data: page.docs });
    },

    /** DELETE: the job is `cancelling` first (it reads `cancelled`, no new fetch starts), then the workflow is cancelled and writes the end. */
    async cancel(req: IdReq, reply: FastifyReply) {
      const job = await findTeamJob(deps, req, kind);
      if (job.status !== 'cancelled') {
        const changed = await markJobCancelled(deps.db, job.id);
        if (!changed) throw new WdsError('CONFLICT', { message: `${NAMES[kind].label} job has already finished (${job.status})` });
      }
      await cancelJob(deps, NAMES[kind].spec, job.id);
      return reply.send({ success: true, status: 'cancelled' });
    },

    async errors(req: IdReq, reply: FastifyReply) {
      const job = await findTeamJob(deps, req, kind);
      return reply.send({ success: true, ...(await jobErrors(deps.db, job.id)) });
    },
  };
}
