/** Browser engine: a Chromium pool rendering pages with actions, behind the network guard. Loads playwright-core: import it only in processes that render. */
export { BrowserPool, DEFAULT_LAUNCH_ARGS, defaultMaxConcurrentPages } from './pool';
export type {
  BrowserPoolOptions,
  PoolStats,
  RenderRequest,
  RenderResult,
  RenderTimings,
  ScreenshotOptions,
  Capture,
  ActionsResult,
} from './types';
export { resolveChromiumExecutable } from './executable';
export { browserEnv, chromiumSandbox, type SandboxSetting } from './launch';
export { AD_HOSTS, isAdHost } from './blocklist';
export { COOKIE_BANNER_SELECTORS } from './consent';
export { COUNTRY_TIMEZONE, localeSettings } from './emulation';
export { BrowserCodes } from './errors';
export { brandingFromObservations, type BrandingProfile, type BrandingObservations } from './branding';
export { LivePage, pageGoneError } from './interact/live-page';
export { runInteraction, KILLED_EXIT_CODE, type InteractionRequest, type InteractionResult } from './interact/run-code';
export { SessionStore, sessionsFullError, teamShareError, type SessionEnd, type SessionStoreOptions, type StoredPage } from './interact/sessions';
export { snapshotPage, type PageSnapshot } from './interact/snapshot';
