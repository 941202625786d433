export * from './formats';
export * from './actions';
export * from './scrape';
export * from './document';
export * from './validation';
export * from './capabilities';
export * from './scopes';
export * from './crawl';
