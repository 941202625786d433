import { scrapeFileKey, type FileContentType, type FileStore } from '@wds/storage';
import type { ActionsResult, Capture } from '@wds/browser';

/** `data.actions` as the spec gives it: links instead of bytes, each list in action order. */
export interface DocumentActions {
  screenshots: string[];
  scrapes: { url: string; html: string }[];
  javascriptReturns: { type: string; value: unknown }[];
  pdfs: string[];
}

async function store(files: FileStore, jobId: string, name: string, bytes: Buffer, type: FileContentType): Promise<string> {
  const key = scrapeFileKey(jobId, name, type);
  await files.put(key, bytes);
  return files.signedUrl(key);
}

/** The `screenshot` format: stored, returned as a signed link. */
export function storeScreenshot(files: FileStore, jobId: string, shot: Capture): Promise<string> {
  return store(files, jobId, 'screenshot', shot.bytes, shot.mime);
}

/** Action screenshots and PDFs stored (in parallel), in order. */
export async function storeActionResults(files: FileStore, jobId: string, a: ActionsResult): Promise<DocumentActions> {
  const [screenshots, pdfs] = await Promise.all([
    Promise.all(a.screenshots.map((s, i) => store(files, jobId, `action-screenshot-${i}`, s.bytes, s.mime))),
    Promise.all(a.pdfs.map((p, i) => store(files, jobId, `action-pdf-${i}`, p, 'application/pdf'))),
  ]);
  return { screenshots, scrapes: a.scrapes, javascriptReturns: a.javascriptReturns, pdfs };
}
