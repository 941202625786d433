// Bytes of any supported type -> a scrape document: HTML (through @wds/transform), PDF, DOCX, text, images.
export * from './build-document';
export * from './pdf/index';
export * from './docs/index';
