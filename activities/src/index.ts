export { createScrapeActivities, type ScrapeActivityDeps } from './scrape/activities';
export { createStoreActivities } from './store/activities';
export type { ScrapeActivities, StoreActivities } from './types';
export { toApplicationFailure } from './failures';
export { createCrawlActivities, createCrawlControlActivities } from './crawl/activities';
export { createMapActivities } from './map/activities';
export type { CrawlActivities, CrawlControlActivities, MapActivities } from './types';
export { startWebhookDispatcher, signWebhookBody } from './webhooks/dispatcher';
