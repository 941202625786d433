/** Public shapes of the PDF parser (see README.md and the spec's "Block item fields"). */

export type PdfMode = 'fast' | 'auto' | 'ocr';

export interface PdfParseOptions {
  /** fast: text layer only; auto: text layer, OCR for pages without usable text; ocr: OCR every page. */
  mode: PdfMode;
  /** Parse at most this many pages (1..10000). */
  maxPages?: number;
  /** Return `pages` (per-page markdown). */
  pages: boolean;
  /** Return `blocks` (typed layout blocks per page). */
  blocks: boolean;
  /** Put `\n\n---\n\n<!-- page N -->\n\n` between pages of the markdown. */
  pageMarkers: boolean;
  /** Whole-parse budget (text extraction + OCR). Exceeding it throws REQUEST_TIMEOUT / SCRAPE_TIMEOUT. */
  timeoutMs: number;
  /** Tesseract language codes, default ['eng'] (each needs its tesseract-ocr-<lang> package). */
  ocrLanguages?: string[];
  signal?: AbortSignal;
}

/** The spec's block types; new ones may appear, so consumers must tolerate unknown values. */
export type PdfBlockType =
  | 'title'
  | 'section_header'
  | 'text'
  | 'table'
  | 'formula'
  | 'figure'
  | 'caption'
  | 'page_number'
  | 'page_header'
  | 'page_footer';

export interface PdfBlock {
  /** `p<page>.b<index in reading order>` (index 0-based). */
  id: string;
  type: PdfBlockType;
  /** Raw label of the heuristic layout pass (`paragraph`, `list_item`, `heading_2`, …). */
  label: string | null;
  /** `[x0, y0, x1, y1]`, normalized 0..1 relative to the page size, origin top-left. */
  bbox: [number, number, number, number] | null;
  /** Markdown fragment this block contributed (its text when it stays out of the markdown). */
  content: string;
  /** `[start, end)` offsets into the returned markdown; null when the block is not in it. */
  markdownSpan: [number, number] | null;
  readingOrder: number;
  /** `text-layer` or `ocr`. */
  source: string | null;
  confidence: { layout: number | null; ocr: number | null };
}

export type PdfPageStatus = 'ok' | 'partial' | 'failed';

export interface PdfPageBlocks {
  pageNumber: number;
  /** Page size in px: PDF units (1/72 in) for text-layer pages, raster pixels for OCR'd pages. */
  width: number | null;
  height: number | null;
  status: PdfPageStatus;
  items: PdfBlock[];
}

export interface PdfPage {
  pageNumber: number;
  markdown: string;
}

export interface PdfMetadata {
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string;
  creator?: string;
  producer?: string;
  /** ISO 8601 when the PDF date parses, else the raw string. */
  creationDate?: string;
  modificationDate?: string;
  language?: string;
  pdfVersion?: string;
}

export interface PdfParseResult {
  markdown: string;
  pages?: PdfPage[];
  blocks?: PdfPageBlocks[];
  /** Pages parsed (capped by maxPages). */
  numPages: number;
  /** True page count of the document. */
  totalPages?: number;
  metadata: PdfMetadata;
  /** Pages that were OCR'd (1-based), for logging / billing insight. */
  ocrPages?: number[];
}
