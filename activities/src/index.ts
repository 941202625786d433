export { createScrapeActivities, type ScrapeActivityDeps } from './scrape/activities';
export { startDirectScrapes, type DirectScrapes, type DirectScrapeOptions } from './scrape/direct';
export { createStoreActivities } from './store/activities';
export { toApplicationFailure } from './failures';
export { createCrawlActivities, createCrawlControlActivities } from './crawl/activities';
export { createCrawlBrowserActivities } from './crawl/browser-page';
export { createMapActivities } from './map/activities';
export { startWebhookDispatcher, signWebhookBody } from './webhooks/dispatcher';
export { endStrandedJob, startJobSweeper, type JobSweeperOptions, type StrandedHandler } from './jobs/stranded';
export { startRetentionSweeper, type RetentionSweeperOptions } from './retention/sweep';
export type { WorkflowDescriber, StrandedSweeperOptions } from './stranded/sweep';
export { createParseActivities, type ParseActivityDeps } from './parse/activities';
export { createBrowserActivities } from './browser/activities';
export type { BrowserActivityDeps, BrowserDocument } from './browser/render-page';
export { gatedRenderer, type Renderer } from './browser/gated-renderer';
export { temporalBrowserAvailability, temporalQueueAvailability, temporalQueueBacklog, type BrowserAvailability, type QueueAvailability } from './browser/availability';
export { createLlmActivities, type LlmActivityDeps } from './llm/activities';
export { createMediaActivities, MEDIA_URL_TTL_SECONDS, type MediaActivityDeps } from './media/activities';
export { createExtractFetchActivities, createExtractControlActivities, createExtractLlmActivities } from './extract/activities';
export { createCrawlLlmActivities, type CrawlLlmDeps } from './llm/crawl-pages';
export { createTokenBudget, type TokenBudget } from './llm/token-budget';
export {
  createAgentControlActivities,
  createAgentLlmActivities,
  createAgentFetchActivities,
  createAgentBrowserActivities,
} from './agent/index';
export { createCatalogControlActivities, createCatalogFetchActivities, type CatalogControlDeps, type CatalogFetchDeps } from './catalog/index';
export {
  createMonitorControlActivities, createMonitorFetchActivities, createMonitorLlmActivities, ensureTickSchedules, startMonitorMailer, startMonitorUpkeep, type MonitorTicking,
} from './monitor/index';
export { deploymentSearch, type SearchHit, type WebSearch } from './search/web-search';
export { createInteractControlActivities } from './interact/control';
export { createInteractLlmActivities } from './interact/llm';
export { createInteractReplayActivities, createInteractSessionActivities, type InteractBrowserDeps } from './interact/session';
export { createPageKeeper, type InteractSessions, type PageKeeper, type SessionMeta } from './interact/park';
export { startPageVersionPruner, type PageVersionPrunerOptions } from './changes/prune';
