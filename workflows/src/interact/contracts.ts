/**
 * The interact session's contract (POST/DELETE /v2/scrape/{id}/interact): one workflow per live
 * session (`interact-<scrapeId>`), started by the first call and ended by DELETE, its idle
 * timeout, its maximum life or the loss of its page. Each call is an update; only ids cross Temporal: the code, the
 * prompt, the page snapshot and the answer are in the interact_calls row.
 *
 * A session's page lives in one browser worker's memory, so every call about it goes to that
 * worker's own task queue (`wds-browser-<workerId>`), which the session row and this workflow
 * remember. Opening a session goes to any browser worker (wds-browser) when it has to replay the
 * scrape.
 */
import { defineUpdate } from '@temporalio/workflow';
import { TaskQueues } from '../common';

/** The task queue only the browser worker `workerId` serves: calls about the pages it holds. */
export const browserSessionQueue = (workerId: string) => `${TaskQueues.browser}-${workerId}`;

export interface InteractWorkflowInput {
  scrapeId: string;
  teamId: string;
  /** A session unused this long ends (WDS_INTERACT_IDLE_SECONDS). */
  idleMs: number;
  /** A session ends this long after it opened, used or not (WDS_INTERACT_MAX_SESSION_SECONDS); absent in runs started before it existed. */
  maxLifeMs?: number;
  /** Carried over continue-as-new: the open session's queue, its concurrency slot and the end of its life (epoch ms). */
  queue?: string;
  slotId?: string | null;
  lifeEndsAt?: number;
}

export interface InteractCallInput {
  /** The interact_calls row (code or prompt, timeout; the answer goes there). */
  callId: string;
  mode: 'code' | 'prompt';
  /** The code's own timeout. */
  timeoutMs: number;
  /** Budget to open the session when there is none (a replay renders the scrape within its own timeout). */
  openTimeoutMs: number;
  /**
   * The team concurrency slot the API took in case this call opens the session: the session
   * holds it (its row says so) or the API frees it after the call.
   */
  slotId?: string | null;
}

export interface InteractStopResult {
  profileSaved: boolean;
  durationMs: number;
  credits: number;
}

/** What a call on an expired session answers (the workflow's validator and the API say the same). */
export function expiredMessage(maxLifeMs: number): string {
  const s = Math.round(maxLifeMs / 1000);
  const life = s % 60 === 0 ? `${s / 60} minutes` : `${s} seconds`;
  return `Gone: this scrape's interact session reached its maximum life of ${life} and was closed (the team's interact session minutes, WDS_INTERACT_SESSION_MINUTES, within WDS_INTERACT_MAX_SESSION_SECONDS). Scrape the page again to interact with it.`;
}

export const interactUpdate = defineUpdate<void, [InteractCallInput]>('interact');
export const stopInteractUpdate = defineUpdate<InteractStopResult, []>('stopInteract');

export interface SessionRef {
  scrapeId: string;
  teamId: string;
  idleMs: number;
  slotId?: string | null;
  /** Epoch ms at which the session's maximum life ends (the worker's store closes it a grace later if the workflow does not). */
  lifeEndsAt?: number;
}

/** wds-control: the session row, the team's slot, billing, the profile lease. */
export interface InteractControlActivities {
  /** The queue of the worker that still holds the scrape's rendered page, if any; `expired` when the scrape's session reached its maximum life. */
  findParkedPage(input: { scrapeId: string }): Promise<{ queue: string } | { expired: true } | null>;
  /** Ends the session's row (slot freed, browser minutes billed, a saving profile's lease freed). Idempotent. */
  endInteractSession(input: { scrapeId: string; teamId: string; reason: string; slotId?: string | null }): Promise<{ durationMs: number; credits: number }>;
}

/** wds-browser: any browser worker renders the scrape again for a new session. */
export interface InteractReplayActivities {
  replaySession(input: SessionRef & { deadlineMs: number }): Promise<{ queue: string }>;
}

/** wds-browser-<workerId>: the worker that holds the session's page. */
export interface InteractSessionActivities {
  /** Makes the parked page of the scrape the session's page; null when this worker no longer has it. */
  adoptSession(input: SessionRef): Promise<{ queue: string } | null>;
  /** Writes the page's snapshot into the call row (prompts). */
  snapshotSession(input: { scrapeId: string; callId: string }): Promise<void>;
  /** Runs the call's code (or the model's) and writes the answer into the call row; `failed`: the code threw or was killed. */
  runInteraction(input: { scrapeId: string; callId: string; idleMs: number }): Promise<{ failed: boolean }>;
  /** Closes the page, writing a saving profile's state back first when `save`. */
  closeSession(input: { scrapeId: string; save: boolean }): Promise<{ profileSaved: boolean }>;
}

/** wds-llm: the model writes the code for a prompt call (into the call row). */
export interface InteractLlmActivities {
  writeInteractCode(input: { callId: string; repair: boolean }): Promise<void>;
}
