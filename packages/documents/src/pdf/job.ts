/**
 * One parse on the pool of parse workers (worker.ts). The lead worker opens the document; its
 * pages are cut into chunks and handed out, on a long document to helper workers too; pages that
 * need OCR are OCR'd on the side (page-ocr.ts); when every chunk and OCR is done, the lead lays out
 * the whole document and answers with the result. The job reacts to worker messages until its
 * outcome settles (result, failure, deadline or abort); `stop` then frees everything it holds.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { siblingModule, WorkerPool } from '@wds/threads';
import { noReadablePageError, ocrUnavailable, PDF_WORKER_HEAP_MB, workerCrashError, workerExitError, workerFailError } from './errors';
import { Outcome } from './outcome';
import { PageOcr } from './page-ocr';
import type { FromWorker, PageRecord, ToWorker } from './protocol';
import type { PdfMetadata, PdfParseOptions, PdfParseResult } from './types';

/** A worker whose heap is above this after a job is not reused. */
const REUSE_HEAP_BYTES = 256 * 1024 * 1024;
/** Pages per extraction chunk. */
const CHUNK_PAGES = 8;
/** From this many pages, an idle warm worker helps with extraction. */
const PARALLEL_MIN_PAGES = 40;
/** From this many pages, a helper is started even when none is idle (start-up costs ~0.5-1 s of CPU). */
const COLD_HELPER_MIN_PAGES = 300;
const MAX_HELPERS = Math.max(0, Math.min(availableParallelism(), 4) - 1);

export const pool = new WorkerPool(
  {
    entry: siblingModule(import.meta.url, 'worker'),
    preload: [import.meta.resolve('unpdf/pdfjs')],
    resourceLimits: { maxOldGenerationSizeMb: PDF_WORKER_HEAP_MB },
  },
  { maxIdle: MAX_HELPERS + 1, maxJobs: 50 },
);
let nextJobId = 1;

type Opened = Extract<FromWorker, { t: 'opened' }>;
type Finished = Extract<FromWorker, { t: 'result' }>;

/** A worker taking part in the job: the lead (first, lays out the document) or a helper. */
interface Member {
  w: Worker;
  lead: boolean;
  state: 'opening' | 'ready' | 'busy' | 'gone';
  detach: () => void;
}

export class ParseJob {
  private readonly id = nextJobId++;
  private readonly outcome: Outcome<PdfParseResult>;
  private readonly ocr: PageOcr;
  private readonly members: Member[] = [];
  /** The lead goes back to the pool only after a clean job with a modest heap. */
  private leadReusable = false;
  // What the lead learned on opening the document.
  private numPages = 0;
  private totalPages: number | undefined;
  private metadata: PdfMetadata = {};
  /** Page ranges not handed out yet, and chunks being extracted. */
  private readonly queue: [number, number][] = [];
  private running = 0;
  private layoutSent = false;
  /** Helpers' page records, forwarded to the lead for the layout pass. */
  private readonly helperRecords: PageRecord[] = [];

  constructor(
    private readonly bytes: Buffer,
    private readonly opts: PdfParseOptions,
    languages: string,
    timeoutMs: number,
    timeoutError: () => unknown,
    abortError: () => unknown,
  ) {
    this.ocr = new PageOcr(bytes, languages);
    this.outcome = new Outcome(timeoutMs, opts.signal, timeoutError, abortError);
  }

  /** Starts the lead worker; settles with the job's outcome. */
  run(): Promise<PdfParseResult> {
    try {
      this.enlist(pool.acquire(), true);
    } catch (e) {
      this.outcome.fail(e);
    }
    return this.outcome.promise;
  }

  /** Kills OCR, returns a healthy lead to the pool and terminates every other worker. */
  async stop(): Promise<void> {
    const ocrStopped = this.ocr.stop();
    const stopping: Promise<unknown>[] = [];
    for (const m of this.members) {
      if (m.state === 'gone') continue;
      m.detach();
      m.state = 'gone';
      if (m.lead && this.leadReusable) pool.release(m.w);
      else stopping.push(pool.discard(m.w));
    }
    await Promise.allSettled([ocrStopped, ...stopping]);
  }

  /** A worker joins: it opens its own copy of the document (the bytes are transferred). */
  private enlist(w: Worker, lead: boolean): void {
    const m: Member = { w, lead, state: 'opening', detach: () => undefined };
    const message = (msg: FromWorker) => this.onMessage(m, msg);
    const error = (e: Error & { code?: string }) => this.outcome.fail(workerCrashError(e));
    const exit = (code: number) => this.outcome.fail(workerExitError(code));
    w.on('message', message);
    w.on('error', error);
    w.on('exit', exit);
    m.detach = () => {
      w.off('message', message);
      w.off('error', error);
      w.off('exit', exit);
    };
    this.members.push(m);
    const copy = new Uint8Array(this.bytes);
    this.post(m, { t: 'open', id: this.id, bytes: copy, metadata: lead }, [copy.buffer]);
  }

  private onMessage(m: Member, msg: FromWorker): void {
    if (this.outcome.settled || msg.id !== this.id || m.state === 'gone') return;
    switch (msg.t) {
      case 'opened':
        if (m.lead) this.planChunks(msg);
        this.assign(m);
        break;
      case 'ocr':
        this.ocr.request(msg.pageNumber, msg.width, msg.height);
        break;
      case 'chunk':
        this.running--;
        if (msg.records) this.helperRecords.push(...msg.records);
        this.assign(m);
        break;
      case 'result':
        this.finish(msg);
        break;
      case 'fail':
        if (m.lead) this.leadReusable = msg.code !== 'INTERNAL';
        this.outcome.fail(workerFailError(msg));
        break;
    }
  }

  /** The lead opened the document: pages 1..min(total, maxPages) become chunks; helpers may join. */
  private planChunks(msg: Opened): void {
    this.totalPages = msg.totalPages;
    this.numPages = Math.min(msg.totalPages, this.opts.maxPages ?? msg.totalPages);
    this.metadata = msg.metadata;
    for (let from = 1; from <= this.numPages; from += CHUNK_PAGES) this.queue.push([from, Math.min(this.numPages, from + CHUNK_PAGES - 1)]);
    this.startHelpers();
  }

  private startHelpers(): void {
    if (this.numPages < PARALLEL_MIN_PAGES) return;
    for (let k = 0; k < MAX_HELPERS && this.queue.length > 1; k++) {
      const w = pool.tryIdle() ?? (this.numPages >= COLD_HELPER_MIN_PAGES ? pool.acquire() : null);
      if (w) {
        this.enlist(w, false);
        continue;
      }
      // None warm: start one for the next long document (it would join this one too late).
      pool.spare();
      break;
    }
  }

  /** Give `m` the next chunk; a helper with nothing left to do goes back to the pool. */
  private assign(m: Member): void {
    const next = this.queue.shift();
    if (next) {
      m.state = 'busy';
      this.running++;
      this.post(m, { t: 'extract', id: this.id, from: next[0], to: next[1], mode: this.opts.mode, keep: m.lead });
      return;
    }
    m.state = 'ready';
    if (!m.lead) {
      this.post(m, { t: 'close', id: this.id });
      m.detach();
      m.state = 'gone';
      pool.release(m.w);
    }
    this.maybeLayout();
  }

  /** Once every chunk is extracted and every OCR done, the lead lays out the whole document. */
  private maybeLayout(): void {
    if (this.layoutSent || this.queue.length || this.running || !this.numPages) return;
    this.layoutSent = true;
    const { opts } = this;
    void this.ocr.results().then((ocr) => {
      if (this.outcome.settled) return;
      if (this.ocr.missing && opts.mode === 'ocr') return this.outcome.fail(ocrUnavailable());
      const layout = { pages: opts.pages, blocks: opts.blocks, pageMarkers: opts.pageMarkers };
      this.post(this.members[0]!, { t: 'layout', id: this.id, extra: this.helperRecords, ocr, mode: opts.mode, layout });
    });
  }

  /** The lead's answer: the result, unless no page could be read at all. */
  private finish(msg: Finished): void {
    this.leadReusable = msg.heapUsed < REUSE_HEAP_BYTES;
    if (this.numPages > 0 && msg.failedPages === this.numPages && !msg.markdown) {
      return this.outcome.fail(this.ocr.missing ? ocrUnavailable() : noReadablePageError());
    }
    const { numPages, totalPages, metadata } = this;
    const result: PdfParseResult = { markdown: msg.markdown, numPages, totalPages, metadata };
    if (!metadata.title && msg.firstHeading) result.metadata = { ...metadata, title: msg.firstHeading };
    if (msg.pages) result.pages = msg.pages;
    if (msg.blocks) result.blocks = msg.blocks;
    if (msg.ocrPages.length) result.ocrPages = msg.ocrPages;
    this.outcome.resolve(result);
  }

  private post(m: Member, msg: ToWorker, transfer?: ArrayBuffer[]): void {
    m.w.postMessage(msg, transfer);
  }
}
