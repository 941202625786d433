import type { FastifyReply, FastifyRequest } from 'fastify';
import { heldConcurrencySlots, teamCreditBalance, teamQueue } from '@wds/db';
import { LLM_CREDITS } from '@wds/llm';
import type { ApiDeps } from '../../deps';
import type { TeamLimitsReader } from '../../middleware/limits';

/** Without a configured limit these report a large number, as a self-hosted Firecrawl does. */
const UNLIMITED = 99_999_999;

/** GET /v2/team/credit-usage, /v2/team/token-usage, /v2/team/queue-status, /v2/concurrency-check (Firecrawl's shapes). */
export function teamControllers(deps: ApiDeps, limitsOf: TeamLimitsReader) {
  /** The team's plan and what is left of it, in credits ×`perCredit`; an unlimited plan stays UNLIMITED in any unit. */
  async function usage(teamId: string, perCredit: number) {
    const [limits, balance] = await Promise.all([limitsOf(teamId), teamCreditBalance(deps.db, teamId)]);
    const plan = limits.creditLimit === null ? UNLIMITED : limits.creditLimit * perCredit;
    // Credits reserved by running jobs (agents) are not available either.
    const remaining = plan - (balance.used + balance.reserved) * perCredit;
    return { plan, remaining: Math.max(0, remaining) };
  }
  return {
    async creditUsage(req: FastifyRequest) {
      const u = await usage(req.auth.teamId, 1);
      return { success: true, data: { remainingCredits: u.remaining, planCredits: u.plan, billingPeriodStart: null, billingPeriodEnd: null } };
    },
    /** Firecrawl's token balance is its extract budget: one pool of credits here, counted in extract's tokens. */
    async tokenUsage(req: FastifyRequest) {
      const u = await usage(req.auth.teamId, LLM_CREDITS.EXTRACT_TOKENS_PER_CREDIT);
      return { success: true, data: { remainingTokens: u.remaining, planTokens: u.plan, billingPeriodStart: null, billingPeriodEnd: null } };
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
