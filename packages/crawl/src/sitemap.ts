import { setImmediate as nextTurn } from 'node:timers/promises';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import { SaxesParser } from 'saxes';

/**
 * Reads a sitemap or sitemap index (plain or gzip, by magic bytes): the `<loc>` of each `<url>`
 * or `<sitemap>`.
 *
 * Linear and bounded, whatever the file: a streaming XML parser (saxes, a character-by-character
 * state machine) reads it in slices, and stops at `maxBytes` of XML (after decompression),
 * `maxUrls` locations or `maxMs` of parsing, keeping what it found. The regex scan it replaces
 * backtracked catastrophically: a 233-byte sitemap took 5.5 s. Linear is not cheap on every
 * input (saxes builds hostile text one character at a time: ~1 MB/s for 10 MB of bare `&`), so
 * the workers parse on a thread (`parseSitemapOnThread`), never on their event loop.
 *
 * Tolerant where real sitemaps are sloppy: parse errors are ignored (saxes carries on after
 * them), a bare `&` in a URL is read as `&amp;`, a file cut short still yields the locations
 * before the cut, names are matched without regard to case or namespace prefix.
 */
export interface SitemapEntries {
  /** Page URLs from a <urlset>. */
  urls: string[];
  /** Child sitemaps from a <sitemapindex>. */
  sitemaps: string[];
}

export interface SitemapLimits {
  /** XML bytes read, after decompression; the rest of a larger file is ignored. */
  maxBytes: number;
  /** Locations taken from one file; the rest are ignored. */
  maxUrls: number;
  /** Time spent parsing one file; what was found by then is kept. */
  maxMs: number;
}

/**
 * The sitemap protocol's own ceilings for one file (50 MB uncompressed, 50,000 URLs), and 10 s:
 * a well-formed 50,000-URL file parses in about 0.5 s.
 */
export const SITEMAP_LIMITS: SitemapLimits = { maxBytes: 50 * 1024 * 1024, maxUrls: 50_000, maxMs: 10_000 };

/** Parsing work between two turns of the event loop (a few ms of saxes on the worst input). */
const CHUNK = 16 * 1024;
/** Sitemaps nest three deep (urlset > url > loc); anything far deeper is not a sitemap. */
const MAX_DEPTH = 32;
/** A location longer than this is not a URL worth crawling. */
const MAX_LOC_CHARS = 8 * 1024;
/** `&` that does not start an entity or character reference (bounded look-ahead: linear). */
const BARE_AMPERSAND = /&(?![a-zA-Z][a-zA-Z0-9]{0,31};|#[0-9]{1,7};|#x[0-9a-fA-F]{1,6};)/g;
/** The longest reference the look-ahead above can need to see, so a chunk's tail can wait for the next. */
const MAX_REFERENCE = 34;

class Stop extends Error {}

/**
 * saxes reports each well-formedness error by building an Error (a stack trace each): a file of
 * millions of errors (`<!--<!--…`, `&x;&x;…`) would cost seconds. Sitemaps only need to go on
 * after errors, so they are counted, not built.
 */
class TolerantParser extends SaxesParser {
  errors = 0;
  override fail(): this {
    this.errors++;
    return this;
  }
}

const localName = (name: string) => name.slice(name.indexOf(':') + 1).toLowerCase();

/** Bytes of the file, decompressed when it is gzip, in slices; the caller stops when it has enough. */
async function* slices(body: Buffer): AsyncGenerator<Buffer> {
  if (!(body[0] === 0x1f && body[1] === 0x8b)) {
    for (let i = 0; i < body.length; i += CHUNK) {
      if (i > 0) await nextTurn();
      yield body.subarray(i, i + CHUNK);
    }
    return;
  }
  // zlib runs off the main thread; a corrupt stream ends the file where it breaks.
  const gunzip = createGunzip({ chunkSize: CHUNK });
  gunzip.end(body);
  try {
    for await (const chunk of gunzip) yield chunk as Buffer;
  } catch {
    // truncated or corrupt gzip: keep what was read
  } finally {
    gunzip.destroy();
  }
}

export async function parseSitemap(body: Buffer, limits: Partial<SitemapLimits> = {}): Promise<SitemapEntries> {
  const { maxBytes, maxUrls, maxMs } = { ...SITEMAP_LIMITS, ...limits };
  const started = performance.now();
  const parser = new TolerantParser({ position: false });
  const out: string[] = [];
  let isIndex = false;
  const stack: string[] = [];
  let loc: string | null = null; // text of the <loc> being read, null outside one

  parser.on('opentag', (tag) => {
    const name = localName(tag.name);
    if (stack.length === 0 && name === 'sitemapindex') isIndex = true;
    if (tag.isSelfClosing) return;
    if (stack.length >= MAX_DEPTH) throw new Stop();
    const parent = stack[stack.length - 1];
    stack.push(name);
    // Only a <loc> directly in <url>/<sitemap> (not image:loc, video:loc…); markup inside it voids it.
    if (loc !== null) loc = null;
    else if (name === 'loc' && (parent === 'url' || parent === 'sitemap')) loc = '';
  });
  const onText = (t: string) => {
    if (loc !== null) loc = loc.length + t.length > MAX_LOC_CHARS ? null : loc + t;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', (tag) => {
    if (tag.isSelfClosing) return;
    const name = stack.pop();
    if (name !== 'loc' || loc === null) return;
    const u = asHttpUrl(loc.trim());
    loc = null;
    if (u) out.push(u);
    if (out.length >= maxUrls) throw new Stop();
  });

  const decoder = new StringDecoder('utf8');
  let read = 0;
  let held = ''; // the tail of the last slice that may be the start of a reference
  try {
    for await (const slice of slices(body)) {
      const take = slice.subarray(0, Math.max(0, maxBytes - read));
      read += take.length;
      let text = held + decoder.write(take);
      const amp = text.lastIndexOf('&');
      held = amp !== -1 && text.length - amp < MAX_REFERENCE && text.indexOf(';', amp) === -1 ? text.slice(amp) : '';
      if (held) text = text.slice(0, amp);
      parser.write(text.replace(BARE_AMPERSAND, '&amp;'));
      if (read >= maxBytes || performance.now() - started > maxMs) break;
    }
    parser.write((held + decoder.end()).replace(BARE_AMPERSAND, '&amp;'));
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
  }
  return isIndex ? { urls: [], sitemaps: out } : { urls: out, sitemaps: [] };
}

function asHttpUrl(s: string): string | null {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null; // not a URL: skip it
  }
}
