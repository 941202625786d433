import type { FastifyReply, FastifyRequest } from 'fastify';
import { heldConcurrencySlots, teamCreditBalance, teamQueue } from '@wds/db';
import type { ApiDeps } from '../../deps';
import type { TeamLimitsReader } from '../../middleware/limits';

/** Without a configured limit these report a large number, as a self-hosted Firecrawl does. */
const UNLIMITED = 99_999_999;

/** GET /v2/team/credit-usage, /v2/team/queue-status, /v2/concurrency-check (Firecrawl's shapes). */
export function teamControllers(deps: ApiDeps, limitsOf: TeamLimitsReader) {
  return {
    async creditUsage(req: FastifyRequest) {
      const [limits, balance] = await Promise.all([limitsOf(req.auth.teamId), teamCreditBalance(deps.db, req.auth.teamId)]);
      const plan = limits.creditLimit ?? UNLIMITED;
      // Credits reserved by running jobs (agents) are not available either.
      const remaining = plan - balance.used - balance.reserved;
      return { success: true, data: { remainingCredits: Math.max(0, remaining), planCredits: plan, billingPeriodStart: null, billingPeriodEnd: null } };
    },
    async queueStatus(req: FastifyRequest) {
      const [limits, q] = await Promise.all([limitsOf(req.auth.teamId), teamQueue(deps.db, req.auth.teamId)]);
      const max = limits.maxConcurrency ?? UNLIMITED;
      const active = Math.min(q.active, max);
      return {
        success: true,
        jobsInQueue: q.active,
        activeJobsInQueue: active,
        waitingJobsInQueue: q.active - active,
        maxConcurrency: max,
        mostRecentSuccess: q.mostRecentSuccess?.toISOString() ?? null,
      };
    },
    async concurrencyCheck(req: FastifyRequest, _reply: FastifyReply) {
      const [limits, held, q] = await Promise.all([limitsOf(req.auth.teamId), heldConcurrencySlots(deps.db, req.auth.teamId), teamQueue(deps.db, req.auth.teamId)]);
      // Slots exist only for teams with a limit; otherwise the running scrapes.
      return { success: true, concurrency: limits.maxConcurrency === null ? q.activeScrapes : held, maxConcurrency: limits.maxConcurrency ?? UNLIMITED };
    },
  };
}
