/**
 * Character classes and the page-level facts detectors share: where URLs are (numbers inside a
 * link target are ids, not phone numbers), the few words before a candidate (its label), and
 * chunks for the word-level detectors. Everything here is a single forward pass.
 */

export const isDigit = (c: number) => c >= 48 && c <= 57;
export const isUpper = (c: number) => c >= 65 && c <= 90;
export const isLower = (c: number) => c >= 97 && c <= 122;
export const isAsciiAlnum = (c: number) => isDigit(c) || isUpper(c) || isLower(c);

const LETTER = /[\p{L}\p{M}]/u;
/** A letter in any script (ASCII fast path). */
export function isLetter(c: number): boolean {
  if (isUpper(c) || isLower(c)) return true;
  return c >= 0xc0 && LETTER.test(String.fromCharCode(c));
}
export const isWordChar = (c: number) => isDigit(c) || isLetter(c);

/** The code at i, or -1 outside the text (so boundary checks need no length tests). */
export const at = (s: string, i: number) => (i >= 0 && i < s.length ? s.charCodeAt(i) : -1);

/** [start, end) ranges, sorted and disjoint. */
export type Range = [number, number];

/**
 * Bare URLs and markdown link targets. Digits in them are paths, ids and timestamps; only the
 * e-mail and `tel:` detectors look inside (a `mailto:` or `tel:` target is personal data).
 */
export function urlRanges(s: string): Range[] {
  const out: Range[] = [];
  const push = (a: number, b: number) => {
    if (b <= a) return;
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  };
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    // "](" opens a markdown link target; "://" and "www." a bare URL.
    if (c === 0x28 /* ( */ && at(s, i - 1) === 0x5d /* ] */) {
      const end = endOfUrl(s, i + 1);
      push(i + 1, end);
      i = end;
      continue;
    }
    if (c === 0x3a /* : */ && at(s, i + 1) === 0x2f && at(s, i + 2) === 0x2f) {
      let a = i;
      while (a > 0 && a > i - 12 && isAsciiAlnum(at(s, a - 1))) a--;
      const end = endOfUrl(s, i + 3);
      push(a, end);
      i = end;
      continue;
    }
    if ((c === 0x77 || c === 0x57) && s.startsWith('www.', i) && !isWordChar(at(s, i - 1))) {
      const end = endOfUrl(s, i + 4);
      push(i, end);
      i = end;
      continue;
    }
    i++;
  }
  return out;
}

function endOfUrl(s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c === 0x29 /* ) */ || c === 0x3e /* > */ || c === 0x22 /* " */ || c === 0x5d /* ] */ || c === 0x3c /* < */) break;
    i++;
  }
  return i;
}

/** Whether [a, b) overlaps one of the ranges; `hint` is a cursor the caller keeps between ordered calls. */
export class RangeSet {
  private i = 0;
  constructor(private readonly ranges: Range[]) {}
  /** Calls must come with non-decreasing `a` (detectors scan forward). */
  overlaps(a: number, b: number): boolean {
    const r = this.ranges;
    while (this.i < r.length && r[this.i]![1] <= a) this.i++;
    return this.i < r.length && r[this.i]![0] < b;
  }
  /** Independent of the cursor (binary search). */
  contains(a: number): boolean {
    let lo = 0;
    let hi = this.ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const [x, y] = this.ranges[mid]!;
      if (a < x) hi = mid - 1;
      else if (a >= y) lo = mid + 1;
      else return true;
    }
    return false;
  }
}

/** Up to `n` characters before `i`, lower case: where a candidate's label ("Tel.", "IBAN:") is. */
export function before(s: string, i: number, n = 32): string {
  return s.slice(Math.max(0, i - n), i).toLowerCase();
}

/** Up to `n` characters from `i`, lower case. */
export function after(s: string, i: number, n = 24): string {
  return s.slice(i, i + n).toLowerCase();
}

/**
 * Chunks for the word-level detectors, cut at a line break (else a space) near `size`: a name or
 * an address never spans a paragraph, and per-chunk word lists keep memory flat on huge pages.
 */
export function chunks(s: string, size = 32_768): Range[] {
  const out: Range[] = [];
  let a = 0;
  while (a < s.length) {
    let b = Math.min(s.length, a + size);
    if (b < s.length) {
      // Only the second half of the chunk is searched, so the cut costs O(size), never O(text).
      const half = a + (size >> 1);
      const nl = lastIn(s, 0x0a, half, b);
      const cut = nl >= 0 ? nl : lastIn(s, 0x20, half, b);
      if (cut >= 0) b = cut + 1;
    }
    out.push([a, b]);
    a = b;
  }
  return out;
}

function lastIn(s: string, code: number, from: number, to: number): number {
  for (let i = to - 1; i >= from; i--) if (s.charCodeAt(i) === code) return i;
  return -1;
}
