export * from './url-key';
export * from './scope';
export * from './robots';
export * from './sitemap';
