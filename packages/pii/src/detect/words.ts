import { isWordChar } from '../text';

/** A word of a chunk: a maximal run of letters and digits. */
export interface Word {
  s: number;
  e: number;
  t: string;
}

/** The words of s[a, b), in order. Linear; words longer than 40 characters are kept but never match a list. */
export function wordsOf(s: string, a: number, b: number): Word[] {
  const out: Word[] = [];
  let i = a;
  while (i < b) {
    if (!isWordChar(s.charCodeAt(i))) {
      i++;
      continue;
    }
    const w0 = i;
    while (i < b && isWordChar(s.charCodeAt(i))) i++;
    out.push({ s: w0, e: i, t: s.slice(w0, Math.min(i, w0 + 41)) });
  }
  return out;
}

const TITLE = /^\p{Lu}[\p{Ll}\p{M}]*(?:\p{Lu}[\p{Ll}\p{M}]+)?$/u;
const UPPER = /^\p{Lu}[\p{Lu}\p{M}]+$/u;

/** "Smith", "Müller", "McDonald" (a capital, then lower case; one inner capital allowed). */
export const isTitleWord = (w: Word | undefined) => !!w && w.t.length >= 2 && w.t.length <= 30 && TITLE.test(w.t);
/** "SMITH": upper-case names in forms and labels. */
export const isUpperWord = (w: Word | undefined) => !!w && w.t.length >= 2 && w.t.length <= 30 && UPPER.test(w.t);
export const isNumberWord = (w: Word | undefined, max = 5) => !!w && w.t.length <= max && /^\d+$/.test(w.t);

/**
 * The text between word i and word i+1, at most 8 characters (a longer gap never joins two
 * parts of a name or an address, and the cap keeps repeated look-ups O(1)).
 */
export function gapAfter(s: string, ws: Word[], i: number): string {
  const e = ws[i]!.e;
  const next = i + 1 < ws.length ? ws[i + 1]!.s : e + 3;
  return next - e > 8 ? '\n\n\n\n\n\n\n\n\n' : s.slice(e, next);
}
