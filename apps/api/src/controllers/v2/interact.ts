import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { interactRequestSchema, type InteractResponse, type ScrapeOptions } from '@wds/contracts';
import {
  acquireConcurrencySlot,
  deleteInteractCall,
  insertInteractCall,
  loadInteractCall,
  loadInteractSession,
  loadScrapeForInteract,
  releaseConcurrencySlot,
  scrapeBilledToTeam,
  type Db,
} from '@wds/db';
import { WdsError } from '@wds/errors';
import { interactCalls } from '@wds/metrics';
import { expiredMessage } from '@wds/workflows/interact';
import type { ApiDeps } from '../../deps';
import { noteLogIds } from '../../logging';
import { requireScope } from '../../middleware/auth';
import type { TeamLimitsReader } from '../../middleware/limits';
import { validateBody } from './validate';
import { interactCall, stopInteract } from '../../services/interact-session';
import { sessionLifeMs } from '../../services/team-caps';
import { checkJobId } from './job-id';

export interface InteractConfig {
  /** A session ends after this long without a call (WDS_INTERACT_IDLE_SECONDS). */
  idleMs: number;
  /** A scrape may be replayed for a session this long after it ran (WDS_INTERACT_WINDOW_HOURS). */
  windowMs: number;
  /**
   * The ceiling of a session's life (WDS_INTERACT_MAX_SESSION_SECONDS): a session ends its team's session minutes
   * after it opened, never later than this (services/team-caps.ts sessionLifeMs); its scrape is then done with interact.
   */
  maxLifeMs: number;
}

/** Beyond the code's own timeout and the replay: the model steps of a prompt, and the hops in between. */
const CALL_MARGIN_MS = 30_000;
const PROMPT_MARGIN_MS = 2 * 180_000;

function scrapeIdOf(req: FastifyRequest<{ Params: { id: string } }>): string {
  const { id } = req.params;
  checkJobId(id);
  noteLogIds(req, { scrapeId: id });
  return id;
}

/**
 * The team's own scrape, or the answer that says why it cannot be interacted with. Another
 * team's scrape id is a 404 like an unknown one (as GET /v2/scrape/{id}): nothing tells a team
 * which ids exist elsewhere. A scrape that kept nothing (zero data retention, lockdown) is 403:
 * its request was not stored, so there is nothing to replay.
 */
async function interactTarget(db: Db, teamId: string, scrapeId: string, windowMs: number) {
  const scrape = await loadScrapeForInteract(db, teamId, scrapeId);
  if (!scrape) {
    if (await scrapeBilledToTeam(db, teamId, scrapeId)) {
      throw new WdsError('FORBIDDEN', {
        code: 'ZDR_SCRAPE',
        message: 'Forbidden: this scrape ran with zero data retention or lockdown, so its request was not kept and it cannot be interacted with. Scrape again without them.',
      });
    }
    throw new WdsError('NOT_FOUND', { message: 'Scrape job not found' });
  }
  const o = scrape.options as ScrapeOptions;
  if (o.zeroDataRetention || o.lockdown || !scrape.url) {
    throw new WdsError('FORBIDDEN', { code: 'ZDR_SCRAPE', message: 'Forbidden: a zero-data-retention or lockdown scrape cannot be interacted with.' });
  }
  if (scrape.status === 'pending') throw new WdsError('CONFLICT', { code: 'SCRAPE_RUNNING', message: 'Conflict: the scrape is still running; interact once it has answered.' });
  if (Date.now() - scrape.createdAt.getTime() > windowMs) {
    throw new WdsError('GONE', {
      code: 'SCRAPE_EXPIRED',
      message: `Gone: this scrape is older than ${Math.round(windowMs / 3_600_000)} hours, past the window in which it can be replayed for interact. Scrape the page again.`,
    });
  }
  return o;
}

/** POST and DELETE /v2/scrape/{id}/interact. */
export function interactControllers(deps: ApiDeps, cfg: InteractConfig, limitsOf: TeamLimitsReader) {
  /** A slot of the team's concurrency for a session about to open (none when one is live, or the team has no limit). */
  async function sessionSlot(teamId: string, scrapeId: string, ttlMs: number): Promise<string | null> {
    if ((await loadInteractSession(deps.db, scrapeId))?.state === 'live') return null;
    const { maxConcurrency } = await limitsOf(teamId);
    if (maxConcurrency === null) return null;
    const slot = await acquireConcurrencySlot(deps.db, teamId, maxConcurrency, ttlMs);
    if (!slot) {
      throw new WdsError('CONCURRENCY_LIMITED', {
        message: `Concurrency limit reached: the team's ${maxConcurrency} concurrent scrapes and browser sessions are all in use. Stop a session (DELETE /v2/scrape/{id}/interact) or retry later.`,
      });
    }
    return slot;
  }

  /** Every call is counted once, by mode and outcome (`error`: no answer from the code, whatever the status). */
  async function run(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
    const counted = { mode: 'invalid', outcome: 'error' };
    try {
      return await runCall(req, reply, counted);
    } finally {
      interactCalls.inc(counted);
    }
  }

  async function runCall(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, counted: { mode: string; outcome: string }) {
    requireScope(req, 'scrape');
    const scrapeId = scrapeIdOf(req);
    const body = validateBody(interactRequestSchema, req.body);
    const { teamId } = req.auth;
    const mode = body.code?.trim() ? 'code' : 'prompt';
    counted.mode = mode;
    if (mode === 'code' && body.language !== 'node') {
      throw new WdsError('FEATURE_NOT_AVAILABLE', { code: 'FEATURE_NOT_AVAILABLE', message: `language '${body.language}' is not available in this deployment: interact runs Playwright code for Node ('node').` });
    }
    const llm = deps.deployment?.llm;
    if (mode === 'prompt' && !llm?.ok) {
      throw new WdsError('FEATURE_NOT_AVAILABLE', { code: 'FEATURE_NOT_AVAILABLE', message: `'prompt' is not available in this deployment: ${llm && !llm.ok ? llm.message : 'no LLM is configured'}. Send 'code' instead.` });
    }
    const o = await interactTarget(deps.db, teamId, scrapeId, cfg.windowMs);
    const maxLifeMs = sessionLifeMs(cfg.maxLifeMs, await limitsOf(teamId));
    // An expired session does not come back by calling again: renewing it forever is what the maximum life prevents.
    if ((await loadInteractSession(deps.db, scrapeId))?.endReason === 'expired') {
      throw new WdsError('GONE', { code: 'SESSION_EXPIRED', message: expiredMessage(maxLifeMs) });
    }
    const timeoutMs = body.timeout * 1000;
    const budgetMs = o.timeout + timeoutMs * (mode === 'prompt' ? 2 : 1) + CALL_MARGIN_MS + (mode === 'prompt' ? PROMPT_MARGIN_MS : 0);
    const slotId = await sessionSlot(teamId, scrapeId, budgetMs + cfg.idleMs);
    const callId = randomUUID();
    try {
      await insertInteractCall(deps.db, { id: callId, scrapeId, teamId, code: mode === 'code' ? body.code : undefined, prompt: mode === 'prompt' ? body.prompt : undefined, timeoutMs });
      await interactCall(deps, { scrapeId, teamId, idleMs: cfg.idleMs, maxLifeMs, budgetMs, call: { callId, mode, timeoutMs, openTimeoutMs: o.timeout, slotId } });
      const answer = (await loadInteractCall(deps.db, callId))?.result as InteractResponse | null | undefined;
      if (!answer) throw new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', message: 'Internal Server Error: the interact call ended without an answer' });
      counted.outcome = answer.success ? 'success' : 'failed';
      return reply.send(answer);
    } finally {
      await deleteInteractCall(deps.db, callId).catch(() => {});
      // A slot the session did not take (it was already open, or it never opened) goes back.
      if (slotId && (await loadInteractSession(deps.db, scrapeId).catch(() => null))?.slotId !== slotId) {
        await releaseConcurrencySlot(deps.db, slotId).catch(() => {});
      }
    }
  }

  async function stop(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
    requireScope(req, 'scrape');
    const scrapeId = scrapeIdOf(req);
    if (!(await loadScrapeForInteract(deps.db, req.auth.teamId, scrapeId))) throw new WdsError('NOT_FOUND', { message: 'Scrape job not found' });
    const stopped = await stopInteract(deps, scrapeId);
    if (stopped) {
      return reply.send({ success: true, status: 'stopped', sessionDurationMs: stopped.durationMs, creditsBilled: stopped.credits, profileSaved: stopped.profileSaved });
    }
    const session = await loadInteractSession(deps.db, scrapeId);
    if (session?.state === 'ended' && session.endReason !== 'evicted') {
      throw new WdsError('GONE', { code: 'SESSION_ENDED', message: `Gone: this scrape's interact session has already ended (${endText(session.endReason)}).` });
    }
    throw new WdsError('NOT_FOUND', { code: 'SESSION_NOT_FOUND', message: 'Browser session not found: no interact session is running for this scrape.' });
  }

  return { run, stop };
}

function endText(reason: string | null): string {
  switch (reason) {
    case 'idle':
      return 'it was idle past its timeout';
    case 'expired':
      return 'it reached its maximum life';
    case 'stopped':
      return 'it was stopped';
    case 'lost':
    case 'gone':
    case 'shutdown':
      return 'its browser worker went away';
    case 'crashed':
      return 'its page crashed';
    default:
      return reason ?? 'unknown';
  }
}
