/** WdsErrors raised by the PDF parser, named once. */
import { WdsError, ScrapeCodes } from '@wds/errors';
import type { FromWorker } from './protocol';

/** Heap cap of a parse worker; beyond it the PDF is refused rather than taking the process down. */
export const PDF_WORKER_HEAP_MB = 768;

export function pdfTimeoutError(timeoutMs: number): WdsError {
  return new WdsError('REQUEST_TIMEOUT', {
    code: ScrapeCodes.TIMEOUT,
    retryable: false,
    message: `PDF parsing exceeded the timeout of ${timeoutMs} ms.`,
  });
}

/** The caller's abort: its reason when that is a WdsError, else a timeout. */
export function abortError(signal: AbortSignal): unknown {
  const r: unknown = signal.reason;
  if (r instanceof WdsError) return r;
  return new WdsError('REQUEST_TIMEOUT', { code: ScrapeCodes.TIMEOUT, retryable: false, message: 'PDF parsing was aborted.', cause: r });
}

export function ocrUnavailable(): WdsError {
  return new WdsError('FEATURE_NOT_AVAILABLE', {
    code: 'OCR_UNAVAILABLE',
    message: 'OCR is not available on this server (it needs the tesseract and pdftoppm programs).',
  });
}

export function notPdfError(): WdsError {
  return new WdsError('UNPROCESSABLE', { code: 'PDF_CORRUPT', message: 'The file is not a PDF (no %PDF- header).' });
}

export function maxPagesError(limit: number): WdsError {
  return new WdsError('BAD_REQUEST', { code: 'INVALID_MAX_PAGES', message: `maxPages must be an integer from 1 to ${limit}.` });
}

export function noReadablePageError(): WdsError {
  return new WdsError('UNPROCESSABLE', { code: 'PDF_CORRUPT', message: 'No page of the PDF could be read; the file is corrupt.' });
}

/** A worker's own verdict: the file is encrypted or corrupt, or the parser hit a bug. */
export function workerFailError(msg: Extract<FromWorker, { t: 'fail' }>): WdsError {
  return msg.code === 'INTERNAL'
    ? new WdsError('INTERNAL', { code: 'PDF_PARSER_ERROR', message: 'The PDF parser failed.', cause: new Error(msg.message) })
    : new WdsError('UNPROCESSABLE', { code: msg.code, message: msg.message });
}

/** A worker thread that threw outside a job's handling: out of heap, or a crash. */
export function workerCrashError(e: Error & { code?: string }): WdsError {
  if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return new WdsError('UNPROCESSABLE', { code: 'PDF_TOO_COMPLEX', message: `The PDF needs more than ${PDF_WORKER_HEAP_MB} MB to parse.`, cause: e });
  }
  return new WdsError('INTERNAL', { code: 'PDF_PARSER_ERROR', message: 'The PDF parser crashed.', cause: e });
}

export function workerExitError(code: number): WdsError {
  return new WdsError('INTERNAL', { code: 'PDF_PARSER_ERROR', message: `The PDF parser exited unexpectedly (code ${code}).` });
}
