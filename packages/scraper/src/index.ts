// Public surface of the engine's HTML half. (fetch.ts / ssrf.ts are exported by their author.)
export * from './types';
export * from './charset';
export * from './clean';
export * from './main-content';
export * from './markdown';
export * from './metadata';
export * from './links';
export * from './urls';
export * from './transform';
export { configureTransformThreads, closeTransformThreads, transformHtmlAsync, transformThreadsSetting } from './transform-pool';
export * from './fetch';
export * from './ssrf';
export * from './build-document';
export * from './cache-key';
export * from './locale';
export * from './crawl/index';
export { createAgent } from './net/connector';
export * from './pdf/index';
export * from './docs/index';
// Browser engine: only the light parts here. The pool (playwright-core, ~100 MB and 0.4 s to
// load) is imported from '@wds/scraper/browser/index' by the processes that render.
export { looksClientRendered } from './browser/heuristics';
export { isAdHost } from './browser/blocklist';
export type { RenderRequest, RenderResult, ScreenshotOptions, Capture, ActionsResult, BrowserPoolOptions } from './browser/types';
