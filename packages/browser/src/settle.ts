/**
 * The automatic settle: after `load` and after each page-changing action, wait until no request
 * is in flight and the DOM has not changed for `settleQuietMs`, at most `settleMaxMs`. Holds the
 * page-side probe code it needs.
 */
import type { Page } from 'playwright-core';
import type { NetActivity } from './network';
import type { RenderJob } from './render-job';

const SETTLE_POLL_MS = 50;

/** Records the time of the last DOM change (childList/characterData) of each document. */
export const MUTATION_PROBE_INIT = `(() => {
  const K = Symbol.for('wds.lastMutation');
  if (window[K]) return;
  let last = performance.now();
  try {
    new MutationObserver(() => { last = performance.now(); })
      .observe(document, { childList: true, subtree: true, characterData: true });
  } catch (e) {}
  Object.defineProperty(window, K, { value: () => last, enumerable: false });
})();`;

// Page-side code runs in the browser; the repo compiles without the DOM lib.
declare const window: unknown;
declare const document: {
  scripts: { length: number };
  readyState: string;
  doctype: unknown;
  documentElement: { outerHTML: string } | null;
};
declare const XMLSerializer: new () => { serializeToString(n: unknown): string };

export const READY_STATE = (): string => document.readyState;

type Probe = { since: number; scripts: number; ready: string; html?: string };
/**
 * Time since the last DOM change, number of scripts, readyState. With `withHtml`, a document
 * that has no scripts and is fully loaded (it cannot change any more) is also serialised the way
 * page.content() does it, saving the capture a round trip.
 */
const PROBE = (withHtml: boolean): Probe => {
  const f = (window as Record<symbol, (() => number) | undefined>)[Symbol.for('wds.lastMutation')];
  const probe: Probe = { since: f ? performance.now() - f() : 1e9, scripts: document.scripts.length, ready: document.readyState };
  if (withHtml && probe.scripts === 0 && probe.ready === 'complete') {
    let html = '';
    if (document.doctype) html = new XMLSerializer().serializeToString(document.doctype);
    if (document.documentElement) html += document.documentElement.outerHTML;
    probe.html = html;
  }
  return probe;
};

export interface SettleWhen {
  /** After `load` (the first settle of a render) rather than after an action. */
  afterLoad: boolean;
  /** Serialise a static document's HTML with the first probe (see `PROBE`). */
  wantStaticHtml?: boolean;
  /** When the settle's time began (`performance.now()`), if before the call: `settleMaxMs` counts from it. */
  since?: number;
}

/**
 * Waits until no request is in flight and the DOM has not changed for `settleQuietMs`, at most
 * `settleMaxMs` from `since`. A document without scripts and without requests in flight cannot
 * change any more: it is done at once (the first check after load), and with `wantStaticHtml` its
 * HTML is returned.
 */
export async function settle(
  p: Page,
  job: RenderJob,
  activity: NetActivity,
  deps: { settleQuietMs: number; settleMaxMs: number },
  { afterLoad, wantStaticHtml = false, since }: SettleWhen,
): Promise<string | undefined> {
  const quiet = deps.settleQuietMs;
  const start = since ?? performance.now();
  const until = Math.min(start + deps.settleMaxMs, job.deadline);
  for (let first = true; ; first = false) {
    let probe: Probe | null = null;
    try {
      probe = await p.evaluate(PROBE, afterLoad && first && wantStaticHtml);
    } catch (e) {
      if (!/Execution context was destroyed|navigat|Cannot find context/i.test(String(e))) throw e;
    }
    const now = performance.now();
    let wait = SETTLE_POLL_MS;
    if (probe) {
      const net = activity.quietFor(now);
      if (afterLoad && first && probe.scripts === 0 && net > 0 && probe.ready === 'complete') return probe.html;
      // After an action, its effects (a scroll event, a fetch) start a moment later: the quiet
      // window counts from the action, not from the last activity before it.
      if (probe.since >= quiet && net >= quiet && (afterLoad || now - start >= quiet)) return undefined;
      wait = Math.max(10, Math.min(SETTLE_POLL_MS, quiet - Math.min(probe.since, net, afterLoad ? Infinity : now - start)));
    }
    if (now + wait >= until) return undefined;
    await job.sleep(wait);
    if (job.failure !== undefined) return undefined;
  }
}
