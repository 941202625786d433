export { createCatalogControlActivities, type CatalogControlDeps } from './control';
export { createCatalogFetchActivities, type CatalogFetchDeps } from './fetch';
