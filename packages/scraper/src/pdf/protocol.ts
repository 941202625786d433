/** Messages between parsePdf (main thread) and the parse worker (worker.ts). */
import type { LayoutOptions } from './layout';
import type { Span } from './lines';
import type { PdfMetadata, PdfMode, PdfPage, PdfPageBlocks } from './types';

export interface WorkerInput {
  bytes: Uint8Array;
  mode: PdfMode;
  maxPages?: number;
  layout: LayoutOptions;
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

/** Every message of a job carries its id (a worker runs one job at a time, but is reused). */
export type FromWorker = { id: number } & (
  | { t: 'open'; totalPages: number; numPages: number; metadata: PdfMetadata }
  /** Page needs OCR; width/height in points. */
  | { t: 'ocr'; pageNumber: number; width: number; height: number }
  | { t: 'extracted'; ocrRequested: number }
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

export type ToWorker =
  | { t: 'job'; id: number; input: WorkerInput }
  | { t: 'ocr-results'; id: number; pages: OcrPageResult[] };
