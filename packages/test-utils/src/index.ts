export * from './fixture-site';
export * from './stack';
export * from './crawl-site';
