import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mapRequestSchema } from '@wds/contracts';
import { insertMapJob, loadMapJob } from '@wds/db';
import { WdsError } from '@wds/errors';
import { allowedUrls } from '@wds/fetch';
import type { ApiDeps } from '../../deps';
import { noteLogIds } from '../../logging';
import { requireScope } from '../../middleware/auth';
import { validateBody } from './validate';
import { checkTeamFeatures } from '../../services/team-features';
import { runJob } from '../../services/jobs';
import { mapJob } from '@wds/workflows/job-specs';

const DEFAULT_MAP_TIMEOUT_MS = 60_000;

/** POST /v2/map: one workflow, one discovery activity, the links read back from Postgres. */
export function mapController(deps: ApiDeps) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'map');
    const o = validateBody(mapRequestSchema, req.body);
    checkTeamFeatures(req.auth, o, [o.url]);
    const id = randomUUID();
    noteLogIds(req, { jobId: id });
    await insertMapJob(deps.db, { id, teamId: req.auth.teamId, options: o });
    const timeoutMs = o.timeout ?? DEFAULT_MAP_TIMEOUT_MS;
    await runJob(deps, mapJob, { jobId: id, args: [{ jobId: id, timeoutMs }], timeoutMs, graceMs: 10_000 });
    const job = await loadMapJob(deps.db, id);
    if (!job || job.status !== 'completed') throw new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', message: 'Internal Server Error: the map finished without links' });
    // Threat protection: blocked links are removed from the result (Firecrawl's docs), the seed was refused above.
    const links = allowedUrls(job.links as { url: string }[], (l) => l.url, o.threatProtection);
    return reply.send({ success: true, id, links });
  };
}
