/**
 * The OCR side of one parse, on the main thread: workers ask for pages to be OCR'd as soon as
 * they see them, so OCR (child processes, ocr.ts) runs while extraction goes on. pdftoppm needs
 * the PDF as a file: it is written to a temporary directory on the first request.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ocrPdfPage, OcrUnavailableError } from './ocr';
import type { OcrPageResult } from './protocol';

export class PageOcr {
  /** tesseract or pdftoppm is missing (`ocr` mode then fails with OCR_UNAVAILABLE). */
  missing = false;
  private readonly jobs: Promise<OcrPageResult>[] = [];
  /** Kills the running child processes. */
  private readonly kill = new AbortController();
  private tmpDir: string | null = null;
  private pdfPath: Promise<string> | null = null;

  constructor(
    private readonly bytes: Buffer,
    private readonly languages: string,
  ) {}

  /** Starts OCR of a page (size in points); a failure becomes a failed page, never an error. */
  request(pageNumber: number, width: number, height: number): void {
    this.jobs.push(this.ocrPage(pageNumber, width, height));
  }

  /** The results of the pages requested so far, once they are all done. */
  results(): Promise<OcrPageResult[]> {
    return Promise.all(this.jobs);
  }

  /** Kills the OCR processes at once, then removes the temporary directory. */
  async stop(): Promise<void> {
    this.kill.abort(new Error('done'));
    // Killed children settle at once; wait for them so nothing writes into the removed directory.
    await Promise.allSettled([...this.jobs, this.pdfPath ?? Promise.resolve('')]);
    if (this.tmpDir) await rm(this.tmpDir, { recursive: true, force: true }).catch(() => undefined);
  }

  private async ocrPage(pageNumber: number, width: number, height: number): Promise<OcrPageResult> {
    try {
      const path = await this.pdfOnDisk();
      const r = await ocrPdfPage(path, pageNumber, width, height, { tmpDir: this.tmpDir!, languages: this.languages, signal: this.kill.signal });
      return { pageNumber, ok: true, spans: r.spans, pxWidth: r.pxWidth, pxHeight: r.pxHeight };
    } catch (e) {
      if (e instanceof OcrUnavailableError) this.missing = true;
      return { pageNumber, ok: false, spans: [], pxWidth: null, pxHeight: null, error: (e as Error)?.message };
    }
  }

  private pdfOnDisk(): Promise<string> {
    this.pdfPath ??= (async () => {
      this.tmpDir = await mkdtemp(join(tmpdir(), 'wds-pdf-'));
      const p = join(this.tmpDir, 'input.pdf');
      await writeFile(p, this.bytes);
      return p;
    })();
    return this.pdfPath;
  }
}
