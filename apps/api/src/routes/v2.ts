import type { FastifyInstance } from 'fastify';
import { scrapeController } from '../controllers/v2/scrape';
import { scrapeStatusController } from '../controllers/v2/scrape-status';
import type { ApiDeps } from '../deps';
import { authenticate } from '../middleware/auth';

/** The v2 route table. Every route sits behind authentication. */
export async function v2Routes(app: FastifyInstance, deps: ApiDeps) {
  app.addHook('onRequest', authenticate(deps.db));
  app.post('/scrape', scrapeController(deps));
  app.get('/scrape/:id', scrapeStatusController(deps));
}
