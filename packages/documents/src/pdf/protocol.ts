/**
 * Messages between parsePdf (main thread) and the parse workers (worker.ts).
 *
 * One parse = one job id. The lead worker opens the document (and reads its
 * metadata), extracts page chunks handed out by the main thread, and finally
 * lays out the whole document. On a long document, helper workers open the
 * same bytes and take chunks too; their page records go back through the
 * main thread to the lead.
 */
import type { LayoutOptions } from './layout';
import type { Line, Span } from './lines';
import type { PdfMetadata, PdfMode, PdfPage, PdfPageBlocks, PdfPageStatus } from './types';

/** What extraction learned about one page. */
export interface PageRecord {
  pageNumber: number;
  /** Page size in points (after /Rotate). */
  width: number;
  height: number;
  lines: Line[];
  /** Letters/digits and broken characters of the text layer. */
  usable: number;
  garbage: number;
  status: PdfPageStatus;
  /** OCR was requested for this page. */
  ocr: boolean;
}

export interface OcrPageResult {
  pageNumber: number;
  ok: boolean;
  /** Spans in page points (same space as the text layer). */
  spans: Span[];
  /** Raster size in px. */
  pxWidth: number | null;
  pxHeight: number | null;
  error?: string;
}

export type ToWorker =
  | { t: 'open'; id: number; bytes: Uint8Array; metadata: boolean }
  /** Extract pages from..to (1-based, inclusive); `keep` keeps the records in the worker (lead). */
  | { t: 'extract'; id: number; from: number; to: number; mode: PdfMode; keep: boolean }
  | { t: 'layout'; id: number; extra: PageRecord[]; ocr: OcrPageResult[]; mode: PdfMode; layout: LayoutOptions }
  /** Forget the job (helpers after their last chunk, anyone on failure). */
  | { t: 'close'; id: number };

export type FromWorker = { id: number } & (
  | { t: 'opened'; totalPages: number; metadata: PdfMetadata }
  /** Page needs OCR; width/height in points. */
  | { t: 'ocr'; pageNumber: number; width: number; height: number }
  | { t: 'chunk'; from: number; to: number; records?: PageRecord[] }
  | {
      t: 'result';
      markdown: string;
      pages?: PdfPage[];
      blocks?: PdfPageBlocks[];
      firstHeading?: string;
      ocrPages: number[];
      failedPages: number;
      /** Heap of the worker after the job, to decide whether to reuse it. */
      heapUsed: number;
    }
  | { t: 'fail'; code: 'PDF_ENCRYPTED' | 'PDF_CORRUPT' | 'INTERNAL'; message: string }
);
