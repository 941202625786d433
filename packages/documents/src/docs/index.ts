// Uploaded documents (PDF, DOCX, HTML, text, images) → markdown (see README.md).
export { parseDocument } from './parse';
export type { ParseDocumentOptions, ParsedDocument, ParsedDocumentMetadata } from './parse';
export { detectDocument, looksBinary, isUtf8Text, zipEntryNames, parseFormats, DOCX_MIME } from './detect';
export type { Detected, DocumentKind, ParseFormatEntry } from './detect';
