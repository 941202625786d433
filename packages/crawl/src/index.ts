export * from './url-key';
export * from './scope';
export * from './traps';
export * from './path-patterns';
export * from './robots';
export * from './sitemap';
export { parseSitemapOnThread, closeSitemapThreads } from './sitemap-thread';
