export * from './client';
export * from './keys';
export * from './scrapes';
export * as schema from './schema/index';
export type { TeamFlags } from './schema/index';
export * from './crawls';
export * from './webhooks';
export * from './maps';
export * from './parse';
