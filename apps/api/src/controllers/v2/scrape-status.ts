import type { FastifyReply, FastifyRequest } from 'fastify';
import { loadTeamScrape } from '@wds/db';
import { WdsError, errorFromRecord } from '@wds/errors';
import type { ApiDeps } from '../../deps';
import { requireScope } from '../../middleware/auth';
import { checkJobId } from './job-id';


/** GET /v2/scrape/{id}: the stored result of the team's own scrape. */
export function scrapeStatusController(deps: ApiDeps) {
  return async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    requireScope(req, 'scrape');
    const { id } = req.params;
    checkJobId(id);
    const row = await loadTeamScrape(deps.db, req.auth.teamId, id);
    if (!row) throw new WdsError('NOT_FOUND', { message: 'Scrape job not found' });
    if (row.status === 'pending') return reply.send({ success: true, status: 'scraping' });
    if (row.status === 'failed') throw errorFromRecord(row.error);
    return reply.send({ success: true, data: row.document });
  };
}
