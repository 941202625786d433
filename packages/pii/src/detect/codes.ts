import { codiceFiscaleValid, dniValid, ibanLength, ibanValid, ninoValid } from '../checksums';
import { at, isAsciiAlnum, isDigit, isUpper, isWordChar, type RangeSet } from '../text';
import type { PiiSpan } from '../types';

/**
 * Identifiers that start with letters: IBANs (compact, or in groups of four), UK National
 * Insurance numbers (compact or "AB 12 34 56 C"), Spanish NIEs and Italian codici fiscali. From
 * each word that starts with an upper-case letter, at most 9 groups / 42 characters are read;
 * the scan then resumes after the word (or the match): O(n).
 */

interface Groups {
  text: string[];
  ends: number[];
}

/** Up to `max` groups of letters/digits joined by single spaces (or '-' when `dash`). */
function readGroups(s: string, i: number, max: number, dash: boolean): Groups {
  const g: Groups = { text: [], ends: [] };
  let total = 0;
  while (g.text.length < max) {
    const a = i;
    while (i < s.length && isAsciiAlnum(s.charCodeAt(i)) && i - a < 34) i++;
    if (i === a) break;
    total += i - a;
    if (total > 42) break;
    g.text.push(s.slice(a, i));
    g.ends.push(i);
    const c = at(s, i);
    if ((c === 0x20 || c === 0xa0 || (dash && c === 0x2d)) && isAsciiAlnum(at(s, i + 1))) i++;
    else break;
  }
  return g;
}

/** The longest prefix of the groups that is a valid IBAN; returns its end or -1. */
function ibanEnd(s: string, g: Groups): number {
  const want = ibanLength(g.text[0]!.slice(0, 2));
  if (!want) return -1;
  let compact = '';
  for (let k = 0; k < g.text.length; k++) {
    compact += g.text[k]!.toUpperCase();
    if (compact.length === want) return ibanValid(compact) && !isWordChar(at(s, g.ends[k]!)) ? g.ends[k]! : -1;
    if (compact.length > want) return -1;
  }
  return -1;
}

export function findCodes(s: string, urls: RangeSet, out: PiiSpan[]): void {
  let i = 0;
  const len = s.length;
  while (i < len) {
    if (!isUpper(s.charCodeAt(i)) || isWordChar(at(s, i - 1))) {
      i++;
      continue;
    }
    const span = urls.contains(i) ? null : codeAt(s, i);
    if (span) {
      out.push(span);
      i = span.end;
      continue;
    }
    while (i < len && isWordChar(s.charCodeAt(i))) i++;
  }
}

/** The identifier starting at i (an upper-case letter at a word start), if any. */
function codeAt(s: string, i: number): PiiSpan | null {
  const c = s.charCodeAt(i);
  const c1 = at(s, i + 1);
  // IBAN: two letters, two check digits, then the account in one block or groups of four.
  if (isUpper(c1) && isDigit(at(s, i + 2)) && isDigit(at(s, i + 3))) {
    const e = ibanEnd(s, readGroups(s, i, 9, false));
    if (e > 0) return { kind: 'IBAN', start: i, end: e };
  }
  // NINO: "AB123456C" or "AB 12 34 56 C".
  if (isUpper(c1)) {
    const g = readGroups(s, i, 5, false);
    const shape = g.text.map((t) => t.length).join(',');
    const k = shape === '9' || shape.startsWith('9,') ? 1 : shape === '2,2,2,2,1' ? 5 : 0;
    if (k) {
      const cand = g.text.slice(0, k).join('');
      if (ninoValid(cand) && !isWordChar(at(s, g.ends[k - 1]!))) return { kind: 'NATIONAL_ID', start: i, end: g.ends[k - 1]! };
    }
  }
  // NIE: X/Y/Z, 7 digits, letter ("X1234567L", "X-1234567-L").
  if ((c === 0x58 || c === 0x59 || c === 0x5a) && (isDigit(c1) || c1 === 0x2d)) {
    // The shortest prefix of the groups that is a valid NIE ("X8032991B respectivamente" reads on into the next word).
    const g = readGroups(s, i, 3, true);
    for (let k = 1; k <= g.text.length; k++) {
      const end = g.ends[k - 1]!;
      if (dniValid(g.text.slice(0, k).join('').toUpperCase()) && !isWordChar(at(s, end))) return { kind: 'NATIONAL_ID', start: i, end };
    }
  }
  // Codice fiscale: one 16-character word.
  let e = i;
  while (e < s.length && isAsciiAlnum(s.charCodeAt(e)) && e - i <= 16) e++;
  if (e - i === 16 && !isWordChar(at(s, e)) && codiceFiscaleValid(s.slice(i, e).toUpperCase())) return { kind: 'NATIONAL_ID', start: i, end: e };
  return null;
}
