export * from './teams';
export * from './scrapes';
export * from './crawls';
export * from './webhooks';
export * from './maps';
export * from './parses';
export * from './profiles';
export * from './limits';
