// HTML -> formats: clean, main content, markdown, metadata, links; on worker threads when configured.
export type { TransformOptions, TransformResult, MetaValue } from './types';
export { transformHtml, transformText, TRANSFORM_VERSION } from './transform';
export { configureTransformThreads, closeTransformThreads, transformHtmlAsync, looksClientRenderedAsync, transformThreadsSetting } from './transform-pool';
export { parsePage, type Page } from './dom';
export { loadHtml, cleanHtml, cleanDocument, cleanPage, serializeHtml, validateSelectors, type CleanOptions, type CleanResult } from './clean';
export { keepMainContent, isBoilerplateToken } from './main-content';
export { htmlToMarkdown, pageToMarkdown, nodeToMarkdown, tidyMarkdown, BASE64_IMAGE_PLACEHOLDER, type MarkdownOptions } from './markdown';
export { extractMetadata, metaKey, type Metadata } from './metadata';
export { extractLinks, extractImages } from './links';
export { resolveUrl, documentBaseUrl, parseSrcset, largestSrcsetCandidate, isHttpUrl, type SrcsetCandidate } from './urls';
export { looksClientRendered } from './heuristics';
