// PDF → markdown, per-page markdown and typed layout blocks (see README.md).
export type {
  PdfMode,
  PdfParseOptions,
  PdfParseResult,
  PdfPage,
  PdfPageBlocks,
  PdfPageStatus,
  PdfBlock,
  PdfBlockType,
  PdfMetadata,
} from './types';
export { parsePdf, isPdf, pdfTimeoutError, warmPdfWorker, PDF_WORKER_HEAP_MB } from './parse';
