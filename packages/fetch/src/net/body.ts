/**
 * Response body reading: Content-Encoding decoding and the body-size cap.
 *
 * undici's `request` API hands us the raw bytes (only its `fetch` decodes), so decoding is done
 * here, as a stream, with the cap counted on the DECODED bytes: a 10 KB gzip of zeros can
 * inflate to gigabytes, so the compressed length (or Content-Length) says nothing useful.
 * The pipeline is backpressured end to end, so at most a few zlib chunks (16 KB each) are
 * produced beyond the cap before everything is torn down.
 */
import { createWriteStream } from 'node:fs';
import { Duplex, Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { WdsError, ScrapeCodes } from '@wds/errors';

/**
 * Stacked codings are legal ("gzip, br") but more than a handful is only useful for
 * decompression-chain attacks; undici's fetch applies the same limit.
 */
const MAX_CODINGS = 5;

// Z_SYNC_FLUSH as finishFlush makes truncated-but-otherwise-valid streams (common with
// misbehaving servers) yield what they have instead of failing; browsers and curl do the same.
const ZLIB_OPTS: zlib.ZlibOptions = {
  flush: zlib.constants.Z_SYNC_FLUSH,
  finishFlush: zlib.constants.Z_SYNC_FLUSH,
};
const BROTLI_OPTS: zlib.BrotliOptions = {
  flush: zlib.constants.BROTLI_OPERATION_FLUSH,
  finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
};

export function bodyTooLargeError(maxBytes: number): WdsError {
  return new WdsError('BAD_GATEWAY', {
    code: ScrapeCodes.BODY_TOO_LARGE,
    retryable: false,
    message: `The page exceeds the maximum body size of ${maxBytes} bytes`,
    details: { maxBytes },
  });
}

/**
 * True when the first two bytes are a zlib (RFC 1950) header. "deflate" is supposed to be
 * zlib-wrapped, but many servers send raw RFC 1951 data, so we sniff like browsers do.
 */
function looksLikeZlibHeader(b: Buffer): boolean {
  const cmf = b[0];
  const flg = b[1];
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

/** "deflate" decoder that picks zlib or raw inflate after seeing the first two bytes. */
function inflateAuto(): Duplex {
  return Duplex.from(async function* (source: AsyncIterable<Buffer>) {
    const it = source[Symbol.asyncIterator]();
    let head = Buffer.alloc(0);
    while (head.length < 2) {
      const r = await it.next();
      if (r.done) break;
      head = Buffer.concat([head, r.value]);
    }
    if (head.length === 0) return;
    const inflater = head.length >= 2 && looksLikeZlibHeader(head)
      ? zlib.createInflate(ZLIB_OPTS)
      : zlib.createInflateRaw(ZLIB_OPTS);
    async function* rest() {
      yield head;
      for (;;) {
        const r = await it.next();
        if (r.done) return;
        yield r.value;
      }
    }
    // The feeding pipeline destroys `inflater` on failure, which surfaces the error through the
    // iteration below; the promise itself is only observed to avoid an unhandled rejection.
    pipeline(rest(), inflater).catch(() => {});
    yield* inflater;
  });
}

/** Decoders in the order they must be applied (reverse of the header's order), or [] to keep raw. */
function decodersFor(contentEncoding: string | undefined): Duplex[] {
  if (!contentEncoding) return [];
  const codings = contentEncoding
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length > MAX_CODINGS) {
    throw new WdsError('BAD_GATEWAY', {
      retryable: false,
      message: `The server used too many content codings (${codings.length}): ${contentEncoding}`,
    });
  }
  const out: Duplex[] = [];
  for (const coding of codings.reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip') out.push(zlib.createGunzip(ZLIB_OPTS));
    else if (coding === 'br') out.push(zlib.createBrotliDecompress(BROTLI_OPTS));
    else if (coding === 'deflate') out.push(inflateAuto());
    else {
      // Unknown coding (we never advertise one, so this is a server bug such as
      // "Content-Encoding: utf-8"): keep the bytes raw rather than fail, like undici's fetch.
      for (const d of out) d.destroy();
      return [];
    }
  }
  return out;
}

export interface ReadBodyOptions {
  contentEncoding?: string;
  contentLength?: string;
  maxBytes: number;
  signal?: AbortSignal;
  /** Write the bytes to this file (created or truncated) instead of returning them; returns an empty buffer. */
  file?: string;
}

/** Reads and decodes a response body, refusing it as soon as the decoded size exceeds `maxBytes`. */
export async function readBody(body: Readable, opts: ReadBodyOptions): Promise<Buffer> {
  const { maxBytes } = opts;
  let decoders: Duplex[];
  try {
    decoders = decodersFor(opts.contentEncoding);
    // Cheap early exit for uncompressed bodies that announce their size.
    const declared = opts.contentLength === undefined ? NaN : Number(opts.contentLength);
    if (decoders.length === 0 && Number.isFinite(declared) && declared > maxBytes) {
      throw bodyTooLargeError(maxBytes);
    }
  } catch (err) {
    // An unread undici body pins its connection; destroying it frees the socket right away.
    body.destroy();
    throw err;
  }

  if (decoders.length === 0 && !opts.file) return readPlain(body, maxBytes, opts.signal);

  // pipeline() destroys every stream with the first error, so all of them re-emit it; the
  // stream that emits FIRST is where it came from. A decoder failing first means corrupt
  // compressed data (a server problem, not a network one) and is reported as such.
  let firstError: { err: unknown; fromDecoder: boolean } | undefined;
  const track = (fromDecoder: boolean) => (err: unknown) => void (firstError ??= { err, fromDecoder });
  body.once('error', track(false));
  for (const d of decoders) d.once('error', track(true));

  const chunks: Buffer[] = [];
  let total = 0;
  const count = (chunk: Buffer): WdsError | undefined => {
    total += chunk.length;
    return total > maxBytes ? bodyTooLargeError(maxBytes) : undefined;
  };
  // In memory (pages), or through a counting stage into a file (media downloads).
  const sinks = opts.file
    ? [new Transform({ transform: (chunk: Buffer, _enc, cb) => cb(count(chunk), chunk) }), createWriteStream(opts.file)]
    : [
        new Writable({
          write(chunk: Buffer, _enc, cb) {
            const tooLarge = count(chunk);
            if (!tooLarge) chunks.push(chunk);
            cb(tooLarge);
          },
        }),
      ];

  try {
    await pipeline([body, ...decoders, ...sinks], { signal: opts.signal });
  } catch (err) {
    if (err instanceof WdsError) throw err;
    if (firstError?.fromDecoder && firstError.err === err) {
      throw new WdsError('BAD_GATEWAY', {
        retryable: false,
        message: `Failed to decode the response body (Content-Encoding: ${opts.contentEncoding}): ${
          (err as Error).message
        }`,
        cause: err,
      });
    }
    throw err;
  }
  return opts.file ? Buffer.alloc(0) : Buffer.concat(chunks, total);
}

/**
 * An uncoded body into memory: what most pages are. Read directly rather than through pipeline(),
 * which aborts an AbortController of its own when it finishes, building a DOMException (with its
 * stack) for every page: ~0.1 ms of a crawled page's CPU. An abort or a read error destroys the
 * body (freeing its connection) and is thrown; the caller reports the abort's cause.
 */
async function readPlain(body: Readable, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
  const aborted = () => (signal!.reason instanceof Error ? signal!.reason : new Error('The body read was aborted'));
  const onAbort = () => body.destroy(aborted());
  if (signal?.aborted) {
    onAbort();
    throw aborted();
  }
  signal?.addEventListener('abort', onAbort, { once: true });
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) {
        body.destroy();
        throw bodyTooLargeError(maxBytes);
      }
      chunks.push(chunk);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return Buffer.concat(chunks, total);
}
