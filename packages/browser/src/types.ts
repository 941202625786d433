/** Public shapes of the browser engine. */
import type { Action } from '@wds/contracts';
import type { BrandingProfile } from './branding';
import type { LivePage } from './interact/live-page';

export interface BrowserPoolOptions {
  /** Chromium binary; default: see resolveChromiumExecutable (CHROMIUM_PATH, Debian paths, PATH). */
  executablePath?: string;
  /** Renders running at once across the pool; further renders wait in FIFO order. */
  maxConcurrentPages: number;
  /** A browser process is retired (closed once idle, replaced for new renders) after this many renders. */
  recycleAfterPages: number;
  /** Extra Chromium switches, appended to the pool's defaults. */
  launchArgs?: string[];
  /** Chromium's sandbox (see launch.ts): `auto` (default) when not root, falling back to none if it cannot start; `on`; `off`. */
  sandbox?: 'auto' | 'on' | 'off';
  /** Chromium's entire environment. Default: `browserEnv(process.env)`, the allow-listed variables only. */
  env?: Record<string, string>;
  /** Browser processes renders are spread over. Default 1 (right for a 2-core worker). */
  browsers?: number;
  /** Automatic wait after `load`: done once no request is in flight and the DOM has not changed for this long. Default 250 ms. */
  settleQuietMs?: number;
  /** Upper bound of that automatic wait after `load` (and after each page-changing action). Default 3000 ms. */
  settleMaxMs?: number;
  /** Time allowed for launching a browser. Default 30 s. */
  launchTimeoutMs?: number;
  /** Time allowed for creating or closing a context before the browser is declared hung and killed. Default 10 s. */
  contextTimeoutMs?: number;
  /** DNS for the SSRF check: every address of a host. Default: dns.lookup(host, {all: true}). */
  resolve?: (host: string) => Promise<string[]>;
  /** Address policy for the SSRF check. Default: isForbiddenAddress from ../ssrf. */
  isForbidden?: (ip: string) => boolean;
}

export interface PoolStats {
  /** Renders holding a page slot. */
  inUse: number;
  /** Renders waiting for a slot. */
  queued: number;
  /** Connected browser processes. */
  browsers: number;
  /** Renders that got a page since the pool was created. */
  pagesServed: number;
  /** Pages kept open after their render (`keepPage`: interact sessions), holding no render slot. */
  livePages: number;
}

export interface ScreenshotOptions {
  fullPage: boolean;
  /** 1–100: JPEG at this quality. Absent: PNG. */
  quality?: number;
  /** Resize the viewport before the shot. */
  viewport?: { width: number; height: number };
}

export interface RenderRequest {
  url: string;
  /** Sent on every request the page makes; a `User-Agent` entry sets the browser's UA. */
  headers?: Record<string, string>;
  /** Whole-render budget in ms, from the call (queue wait included) to the result. */
  timeoutMs: number;
  /** Extra wait after the automatic settle, in ms. */
  waitFor: number;
  mobile: boolean;
  /** Default: country US. */
  location?: { country?: string; languages?: string[] };
  blockAds: boolean;
  skipTlsVerification: boolean;
  allowPrivateNetwork: boolean;
  actions?: Action[];
  screenshot?: ScreenshotOptions;
  /** A Playwright storageState object (a profile's cookies and localStorage) loaded into the context. */
  storageState?: unknown;
  /** Return `context.storageState()` as it is at the end of the render. */
  captureStorageState?: boolean;
  /** Observe the page's brand styles after the render (the `branding` format, branding.ts). */
  branding?: boolean;
  /**
   * Keep the page open after the render and return it as `result.page` (an interact session):
   * the caller must close it. It holds no render slot once the render has returned.
   */
  keepPage?: boolean;
  signal?: AbortSignal;
  /**
   * Called with the URL of every main-frame navigation request — the first, each redirect hop,
   * later navigations (actions, scripts): throws to refuse it (threat protection, as
   * FetchRequest.checkUrl). Chromium has issued the request when Playwright reports it (routes
   * never see redirect hops), so a refusal fails the render with the thrown error and nothing
   * of the page is returned; unlike the HTTP engine, the refused host may have seen that request.
   */
  checkUrl?: (url: URL) => void;
}

export interface Capture {
  bytes: Buffer;
  mime: 'image/png' | 'image/jpeg';
}

export interface ActionsResult {
  screenshots: Capture[];
  scrapes: { url: string; html: string }[];
  javascriptReturns: { type: string; value: unknown }[];
  pdfs: Buffer[];
}

export interface RenderTimings {
  /** Waiting for a page slot. */
  queueMs: number;
  /** Launching a browser (0 when one was running). */
  launchMs: number;
  /** newContext + newPage. */
  contextMs: number;
  /** goto until `load`. */
  navigationMs: number;
  /** Automatic network/DOM settle after load. */
  settleMs: number;
  /** The request's `waitFor`. */
  waitForMs: number;
  actionsMs: number;
  /** page.content(), screenshot and storage state. */
  captureMs: number;
  totalMs: number;
}

export interface RenderResult {
  /** URL of the document in the main frame at capture time (after redirects and navigations). */
  finalUrl: string;
  /** Status of that document's response (0 when unknown, e.g. about:blank). */
  statusCode: number;
  /** Its response headers, lower-case names. */
  headers: Record<string, string>;
  /** MIME type without parameters, lower case; "" when absent. */
  contentType: string;
  /** The live DOM after scripts (page.content()). */
  html: string;
  screenshot?: Capture;
  /** Present when `actions` was given (even empty). */
  actions?: ActionsResult;
  storageState?: unknown;
  branding?: BrandingProfile;
  /** Requests aborted by the ad block list / by the SSRF guard. */
  blocked: { ads: number; ssrf: number };
  timings: RenderTimings;
  /** The page, still open (`keepPage`). */
  page?: LivePage;
}
