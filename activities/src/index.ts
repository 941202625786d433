export { createScrapeActivities, type ScrapeActivityDeps } from './scrape/activities';
export { createStoreActivities } from './store/activities';
export type { ScrapeActivities, StoreActivities } from './types';
export { toApplicationFailure } from './failures';
