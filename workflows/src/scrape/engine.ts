/**
 * Which engine serves a scrape — pure, shared by the fetch activity (which sees the options)
 * and the scrape workflow (which only sees the activity's flags). HTTP first; the browser when
 * the request needs one or the fetched HTML turns out to be rendered by scripts.
 *
 * - Required (no HTTP equivalent; without a browser worker the scrape fails with 503
 *   BROWSER_UNAVAILABLE): `actions`, the `screenshot` and `branding` formats (computed styles
 *   of the rendered page), `mobile` (device emulation, not just a UA string), `profile` (browser storage).
 * - Preferred (the HTTP engine approximates it; used when a browser worker is polling
 *   wds-browser, else HTTP): `waitFor` > 0 (HTTP sleeps, then fetches), and HTML that
 *   `looksClientRendered` (escalated after the HTTP fetch).
 * - Neither: `location` alone stays on HTTP — the Accept-Language header is what servers
 *   see; timezone and navigator.language emulation apply whenever the browser renders anyway.
 *   `headers` and `blockAds` likewise follow the engine chosen.
 *
 * Workflow-safe: no imports beyond types.
 */
export type BrowserNeed = 'actions' | 'screenshot' | 'branding' | 'mobile' | 'profile' | 'waitFor' | 'clientRendered';

export interface EngineInputs {
  formats: readonly { type: string }[];
  actions?: readonly unknown[];
  mobile?: boolean;
  profile?: unknown;
  waitFor?: number;
}

export function requiredBrowserNeeds(o: EngineInputs): BrowserNeed[] {
  const out: BrowserNeed[] = [];
  if (o.actions?.length) out.push('actions');
  if (o.formats.some((f) => f.type === 'screenshot')) out.push('screenshot');
  if (o.formats.some((f) => f.type === 'branding')) out.push('branding');
  if (o.mobile) out.push('mobile');
  if (o.profile) out.push('profile');
  return out;
}

export function preferredBrowserNeeds(o: EngineInputs): BrowserNeed[] {
  return (o.waitFor ?? 0) > 0 ? ['waitFor'] : [];
}

export type EnginePlan =
  /** Fetch over HTTP; escalate when the HTML looks client-rendered and a browser is there. */
  | { engine: 'http'; escalateIfClientRendered: boolean }
  | { engine: 'browser'; required: boolean; reasons: BrowserNeed[] }
  /** The request needs a browser and no worker serves wds-browser. */
  | { engine: 'unavailable'; reasons: BrowserNeed[] };

export function planEngine(o: EngineInputs, browserAvailable: boolean): EnginePlan {
  const required = requiredBrowserNeeds(o);
  const preferred = preferredBrowserNeeds(o);
  if (required.length) return browserAvailable ? { engine: 'browser', required: true, reasons: [...required, ...preferred] } : { engine: 'unavailable', reasons: required };
  if (preferred.length && browserAvailable) return { engine: 'browser', required: false, reasons: preferred };
  return { engine: 'http', escalateIfClientRendered: browserAvailable };
}

/**
 * How long a preferred (optional) browser render may wait for a browser worker to pick it up
 * before the scrape falls back to HTTP: covers a browser fleet that vanished since the check,
 * or one so saturated that the HTTP answer is the better deal.
 */
export const OPTIONAL_BROWSER_PICKUP_MS = 10_000;

/** Timeouts of the browser activity, from the scrape's remaining budget. */
export function browserActivityTimeouts(remainingMs: number, required: boolean) {
  const budget = Math.max(1_000, remainingMs);
  return {
    scheduleToCloseTimeout: budget + 3_000,
    startToCloseTimeout: budget + 2_000,
    // Heartbeats every 2 s: a dead worker's render is retried quickly instead of at the budget's end.
    heartbeatTimeout: 10_000,
    scheduleToStartTimeout: required ? undefined : Math.max(1_000, Math.min(OPTIONAL_BROWSER_PICKUP_MS, Math.floor(budget / 2))),
  };
}

/**
 * Timeouts of the LLM activity (and of the media activity, the same rule), from the scrape's
 * remaining budget: it may wait in the queue behind other model calls (wds-llm has few slots)
 * and retry a failing provider, all within it.
 */
export function llmActivityTimeouts(remainingMs: number) {
  const budget = Math.max(1_000, remainingMs);
  // Temporal stops retrying, with the last attempt's error, as soon as the next backoff would end
  // past scheduleToClose. Reaching one longest backoff beyond the deadline means a provider that
  // fails until the deadline is retried up to it, and the attempt after it answers SCRAPE_TIMEOUT
  // (the request's 408), instead of the provider's 502 up to a backoff before the timeout.
  return { scheduleToCloseTimeout: budget + LLM_RETRY_MAX_INTERVAL_MS + 2_000, startToCloseTimeout: budget + 1_000, heartbeatTimeout: 10_000 };
}

/** The longest wait between two attempts of the model step (its retry policy's maximumInterval). */
export const LLM_RETRY_MAX_INTERVAL_MS = 10_000;
