// Bytes of any supported type -> a scrape document: HTML (through @wds/transform), PDF, DOCX, text, images.
export * from './build-document';
export * from './outputs';
export { addProduct, redactMarkdown, redactText, PII_CREDITS_PER_PAGE, type MediaDraft } from './page-extras';
export * from './pdf/index';
export * from './docs/index';
export * from './cached';
