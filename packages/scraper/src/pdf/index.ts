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
export { parsePdf, isPdf, pdfTimeoutError, PDF_WORKER_HEAP_MB } from './parse';
export { layoutDocument, joinLines } from './layout';
export type { PageLines, LayoutOptions, LayoutResult } from './layout';
export { buildLines } from './lines';
export type { Span, Segment, Line } from './lines';
export { ocrImage, parseTesseractTsv, tesseractLanguages, OcrUnavailableError, OCR_DPI } from './ocr';
export type { OcrWordPage } from './ocr';
