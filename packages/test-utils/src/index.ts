export * from './fixture-site';
export * from './stack';
export * from './crawl-site';
export * from './temporal';
export * from './wait';
export * from './tcp-proxy';
export * from './fake-openai';
export * from './fake-searxng';
