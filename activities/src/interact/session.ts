import { Context } from '@temporalio/activity';
import type { ScrapeOptions } from '@wds/contracts';
import type { InteractionRequest, InteractionResult, LivePage, PageSnapshot, RenderRequest, RenderResult } from '@wds/browser';
import { loadInteractCall, loadScrapeJob, openInteractSession, touchInteractSession, updateInteractCall, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { InteractReplayActivities, InteractSessionActivities, SessionRef } from '@wds/workflows/interact';
import { scrapeRenderRequest } from '../browser/render-page';
import { openProfile } from '../browser/profile';
import { asActivity } from '../failures';
import { answerOf } from './answer';
import type { InteractSessions, SessionMeta } from './park';

/**
 * The browser side of interact sessions. `replaySession` runs on wds-browser (any browser worker
 * renders the scrape again and keeps the page); the others run on this worker's own queue, where
 * only this process can take them, because only it holds the page.
 */
export interface InteractBrowserDeps {
  db: Db;
  allowPrivateNetwork: boolean;
  renderer: { render(req: RenderRequest): Promise<RenderResult> };
  sessions: InteractSessions;
  /** This worker's own queue (wds-browser-<workerId>). */
  queue: string;
  /** @wds/browser's runInteraction and snapshotPage (loaded by the worker: activities never load playwright-core). */
  engine: {
    run(page: LivePage, req: InteractionRequest): Promise<InteractionResult>;
    snapshot(page: LivePage): Promise<PageSnapshot>;
  };
}

const HEARTBEAT_MS = 2_000;
/** A session's profile lease and concurrency slot outlive its idle timeout by this much. */
const HOLD_MARGIN_MS = 60_000;

/** The profile lease of a session (owner `interact:<scrape>`): taken when it opens, renewed by each call, saved when it stops. */
export const sessionOwner = (scrapeId: string) => `interact:${scrapeId}`;

async function heartbeating<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
  beat.unref();
  try {
    return await asActivity(() => fn(ctx.cancellationSignal));
  } finally {
    clearInterval(beat);
  }
}

function sessionGone(): WdsError {
  return new WdsError('GONE', {
    code: 'SESSION_ENDED',
    message: 'Gone: the interact session\'s page is no longer open (it was unused too long, or its browser restarted).',
  });
}

export function createInteractReplayActivities(deps: InteractBrowserDeps): InteractReplayActivities {
  return {
    replaySession: (input) =>
      heartbeating(async (signal) => {
        const job = await loadScrapeJob(deps.db, input.scrapeId);
        if (!job || job.teamId !== input.teamId || !job.url) throw new WdsError('NOT_FOUND', { message: 'Scrape job not found' });
        // Before rendering: a worker with no room for another session (or none for this team) says so at once.
        deps.sessions.assertRoom({ teamId: job.teamId });
        const o = { ...(job.options as ScrapeOptions), url: job.url };
        const profile = o.profile
          ? await openProfile(deps.db, { teamId: job.teamId, profile: o.profile, owner: sessionOwner(input.scrapeId), budgetMs: input.idleMs + HOLD_MARGIN_MS })
          : undefined;
        try {
          const timeoutMs = Math.max(1_000, input.deadlineMs - Date.now());
          const r = await deps.renderer.render({ ...scrapeRenderRequest(o, { timeoutMs, allowPrivateNetwork: deps.allowPrivateNetwork, storageState: profile?.state, signal }), keepPage: true });
          deps.sessions.open(input.scrapeId, r.page!, { teamId: job.teamId, profile: o.profile }, input.lifeEndsAt);
          await record(deps, input);
          return { queue: deps.queue };
        } catch (e) {
          await profile?.release().catch(() => {});
          throw e;
        }
      }),
  };
}

/** The session row says this worker's queue holds the page (and which slot the session holds). */
async function record(deps: InteractBrowserDeps, input: SessionRef): Promise<void> {
  try {
    await openInteractSession(deps.db, { scrapeId: input.scrapeId, teamId: input.teamId, queue: deps.queue, slotId: input.slotId });
  } catch (e) {
    await deps.sessions.end(input.scrapeId, 'evicted');
    throw e;
  }
}

export function createInteractSessionActivities(deps: InteractBrowserDeps): InteractSessionActivities {
  const profileOf = (scrapeId: string, meta: SessionMeta, idleMs: number) =>
    meta.profile ? openProfile(deps.db, { teamId: meta.teamId, profile: meta.profile, owner: sessionOwner(scrapeId), budgetMs: idleMs + HOLD_MARGIN_MS }) : undefined;
  const live = (scrapeId: string) => {
    const s = deps.sessions.get(scrapeId);
    if (!s || s.state !== 'live' || s.page.gone) throw sessionGone();
    return s;
  };
  return {
    adoptSession: (input) =>
      heartbeating(async () => {
        const parked = deps.sessions.get(input.scrapeId);
        if (!parked || parked.page.gone || parked.meta.teamId !== input.teamId) return null;
        // A saving profile's lease first: a conflict leaves the page parked.
        await profileOf(input.scrapeId, parked.meta, input.idleMs);
        if (!deps.sessions.adopt(input.scrapeId, parked.meta, input.lifeEndsAt)) return null;
        await record(deps, input);
        return { queue: deps.queue };
      }),

    snapshotSession: ({ scrapeId, callId }) =>
      heartbeating(async () => {
        const s = live(scrapeId);
        await updateInteractCall(deps.db, callId, { snapshot: await deps.engine.snapshot(s.page) });
      }),

    runInteraction: ({ scrapeId, callId, idleMs }) =>
      heartbeating(async (signal) => {
        const s = live(scrapeId);
        const call = await loadInteractCall(deps.db, callId);
        const code = call?.code ?? call?.generatedCode;
        if (!call || !code) throw new WdsError('NOT_FOUND', { message: `Interact call ${callId} not found` });
        s.busy = true;
        try {
          const r = await deps.engine.run(s.page, { code, timeoutMs: call.timeoutMs, signal });
          await updateInteractCall(deps.db, callId, { result: answerOf(r, call) });
          await touchInteractSession(deps.db, { scrapeId, queue: deps.queue, ttlMs: idleMs + HOLD_MARGIN_MS, prompted: !!call.prompt });
          await profileOf(scrapeId, s.meta, idleMs);
          return { failed: r.exitCode !== 0 };
        } finally {
          s.busy = false;
          deps.sessions.touch(s);
        }
      }),

    closeSession: ({ scrapeId, save }) =>
      heartbeating(async () => {
        const s = deps.sessions.get(scrapeId);
        if (!s || s.page.gone) return { profileSaved: false };
        let profileSaved = false;
        try {
          const profile = save && s.meta.profile?.saveChanges ? await profileOf(scrapeId, s.meta, 0) : undefined;
          if (profile?.saving) {
            await profile.save(await s.page.storageState());
            profileSaved = true;
          }
        } finally {
          await deps.sessions.end(scrapeId, 'stopped');
        }
        return { profileSaved };
      }),
  };
}
