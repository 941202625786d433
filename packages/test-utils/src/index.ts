export * from './fixture-site';
export * from './stack';
