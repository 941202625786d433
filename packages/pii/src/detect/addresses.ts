import { DE_NL_STREET_SUFFIX, DE_STREET_WORDS, EN_STREET_TYPES, FR_STREET_TYPES, NOT_NAME, ROMANCE_PARTICLES, ROMANCE_STREET_TYPES, US_STATES } from '../names-data';
import type { PiiSpan } from '../types';
import { gapAfter, isNumberWord, isTitleWord, type Word } from './words';

/**
 * Postal addresses, by the shapes streets are written in:
 * - English: "221B Baker Street", "1600 Pennsylvania Avenue NW" (+ ", Apt 4", + "Springfield, IL 62704", + a UK postcode);
 * - German and Dutch: "Hauptstraße 5", "Karl-Marx-Allee 12a", "Keizersgracht 123" (+ ", 10115 Berlin", "1015 CJ Amsterdam");
 * - French: "12 rue de la Paix" (+ ", 75002 Paris");
 * - Spanish, Italian, Portuguese: "Calle Mayor 5", "Via Roma, 10", "Av. Paulista, 1578" (+ ", 28013 Madrid", "01310-100");
 * - a UK postcode on its own ("SW1A 1AA").
 * Every shape reads a bounded number of words from its start: O(words).
 */
const SP = /^[ \u00a0]$/;
const COMMA = /^(?:, ?|\n|, ?\n| ?\n ?| - | – )$/;
const HOUSE = /^\d{1,4}[a-zA-Z]?$/;
const ORDINAL = /^\d{1,3}(?:st|nd|rd|th)$/;
const UK_OUT = /^[A-Z]{1,2}\d[A-Z\d]?$/;
const UK_IN = /^\d[A-Z]{2}$/;

type Match = { start: number; endWord: number };

const title = (w: Word | undefined) => isTitleWord(w) && !NOT_NAME.has(w!.t);

/** UK postcode at words i, i+1: returns the last word index or -1. */
function ukPostcode(s: string, ws: Word[], i: number): number {
  return UK_OUT.test(ws[i]?.t ?? '') && SP.test(gapAfter(s, ws, i)) && UK_IN.test(ws[i + 1]?.t ?? '') ? i + 1 : -1;
}

/** Town words after a postal code, up to three capitalised ones ("Frankfurt am Main" is two and a particle). */
function town(s: string, ws: Word[], i: number): number {
  if (!isTitleWord(ws[i])) return -1;
  let j = i;
  for (let n = 0; n < 2; n++) {
    const g = gapAfter(s, ws, j);
    if (!(SP.test(g) || g === '-')) break;
    const nx = ws[j + 1];
    if (isTitleWord(nx) && !NOT_NAME.has(nx!.t)) j++;
    else if ((nx?.t === 'am' || nx?.t === 'an' || nx?.t === 'sur' || nx?.t === 'de') && isTitleWord(ws[j + 2])) j += 2;
    else break;
  }
  return j;
}

/** The tail after a street: unit, town with postal code (European or US), UK postcode. */
function tail(s: string, ws: Word[], j: number): number {
  let end = j;
  // ", Apt 4B", " Suite 200", ", 3rd Floor"
  const g = gapAfter(s, ws, end);
  if ((COMMA.test(g) || SP.test(g)) && /^(?:Apt|Apartment|Suite|Ste|Unit|Floor|Fl|Room|Flat)$/.test(ws[end + 1]?.t ?? '') && /^(?:\.? |\.? ?#)$/.test(gapAfter(s, ws, end + 1) || ' ')) {
    if (/^\w{1,5}$/.test(ws[end + 2]?.t ?? '')) end += 2;
  }
  const g2 = gapAfter(s, ws, end);
  if (!COMMA.test(g2)) return end;
  const k = end + 1;
  // European: "10115 Berlin", "75002 Paris", "1015 CJ Amsterdam", "01310-100 São Paulo"
  if (/^\d{4,5}$/.test(ws[k]?.t ?? '')) {
    let p = k;
    if (gapAfter(s, ws, k) === '-' && /^\d{3}$/.test(ws[k + 1]?.t ?? '')) p = k + 1; // Brazilian CEP
    else if (SP.test(gapAfter(s, ws, k)) && /^[A-Z]{2}$/.test(ws[k + 1]?.t ?? '') && ws[k]!.t.length === 4) p = k + 1; // Dutch postcode
    if (!SP.test(gapAfter(s, ws, p))) return p > k || ws[k]!.t.length === 5 ? p : end;
    const t = town(s, ws, p + 1);
    return t > 0 ? t : end;
  }
  // US: "Springfield, IL 62704"
  const t = town(s, ws, k);
  if (t > 0 && /^(?:, ?| )$/.test(gapAfter(s, ws, t)) && US_STATES.has(ws[t + 1]?.t ?? '') && SP.test(gapAfter(s, ws, t + 1)) && /^\d{5}$/.test(ws[t + 2]?.t ?? '')) {
    const zip4 = gapAfter(s, ws, t + 2) === '-' && /^\d{4}$/.test(ws[t + 3]?.t ?? '');
    return zip4 ? t + 3 : t + 2;
  }
  // UK: "London SW1A 1AA" or just "SW1A 1AA"
  const pc = ukPostcode(s, ws, k);
  if (pc > 0) return pc;
  if (t > 0 && (SP.test(gapAfter(s, ws, t)) || COMMA.test(gapAfter(s, ws, t)))) {
    const pc2 = ukPostcode(s, ws, t + 1);
    if (pc2 > 0) return pc2;
  }
  return end;
}

/** "221B Baker Street", "10 Downing St", "350 5th Ave". */
function english(s: string, ws: Word[], i: number): Match | null {
  if (!HOUSE.test(ws[i]!.t) || !SP.test(gapAfter(s, ws, i))) return null;
  let j = i + 1;
  let names = 0;
  while (names < 4 && j < ws.length) {
    const w = ws[j]!;
    if (EN_STREET_TYPES.has(w.t) && names > 0) {
      let end = j;
      if (gapAfter(s, ws, j) === '.' || gapAfter(s, ws, j).startsWith('. ')) end = j; // "St."
      // "Avenue NW"
      if (SP.test(gapAfter(s, ws, j)) && /^(?:N|S|E|W|NE|NW|SE|SW)$/.test(ws[j + 1]?.t ?? '')) end = j + 1;
      return { start: ws[i]!.s, endWord: tail(s, ws, end) };
    }
    if (!(isTitleWord(w) || ORDINAL.test(w.t)) || !SP.test(gapAfter(s, ws, j))) return null;
    names++;
    j++;
  }
  return null;
}

/** "Hauptstraße 5", "Karl-Marx-Allee 12a", "Berliner Str. 7", "Keizersgracht 123". */
function germanic(s: string, ws: Word[], i: number): Match | null {
  const w = ws[i]!;
  let streetEnd = -1;
  if (isTitleWord(w) && DE_NL_STREET_SUFFIX.test(w.t) && w.t.length > 4) streetEnd = i;
  // "Berliner Straße 5": a capitalised word, then the street word
  else if (isTitleWord(w) && SP.test(gapAfter(s, ws, i)) && DE_STREET_WORDS.has(ws[i + 1]?.t ?? '')) streetEnd = i + 1;
  // "Karl-Marx-Straße": hyphenated words ending in a street word
  else if (isTitleWord(w) && gapAfter(s, ws, i) === '-') {
    let j = i;
    while (j - i < 4 && gapAfter(s, ws, j) === '-' && isTitleWord(ws[j + 1])) j++;
    if (j > i && DE_NL_STREET_SUFFIX.test(ws[j]!.t)) streetEnd = j;
  }
  if (streetEnd < 0) return null;
  const g = gapAfter(s, ws, streetEnd);
  if (!(SP.test(g) || g === '. ')) return null;
  if (!HOUSE.test(ws[streetEnd + 1]?.t ?? '')) return null;
  let end = streetEnd + 1;
  // "12-14", "12/3"
  if (/^[-/]$/.test(gapAfter(s, ws, end)) && /^\d{1,4}[a-z]?$/.test(ws[end + 1]?.t ?? '')) end++;
  return { start: w.s, endWord: tail(s, ws, end) };
}

/** "12 rue de la Paix", "8 bis avenue Victor Hugo". */
function french(s: string, ws: Word[], i: number): Match | null {
  if (!/^\d{1,4}$/.test(ws[i]!.t) || !SP.test(gapAfter(s, ws, i))) return null;
  let j = i + 1;
  if (/^(?:bis|ter)$/.test(ws[j]?.t ?? '') && SP.test(gapAfter(s, ws, j))) j++;
  const type = ws[j]?.t ?? '';
  if (!FR_STREET_TYPES.has(type.toLowerCase())) return null;
  const end = romanceName(s, ws, j, true);
  return end > 0 ? { start: ws[i]!.s, endWord: end } : null;
}

/**
 * The name after a street type: particles and capitalised words, ending with a capitalised one
 * ("de la Paix", "des Champs-Élysées", "Giuseppe Garibaldi"); -1 when there is none.
 */
function nameAfterType(s: string, ws: Word[], typeIdx: number): number {
  let j = typeIdx;
  let last = -1;
  for (let n = 0; n < 6 && j + 1 < ws.length; n++) {
    const g = gapAfter(s, ws, j);
    const next = ws[j + 1]!;
    const joined = g === '-' || g === "'" || g === '’';
    if (!(SP.test(g) || g === '. ' || joined || (n === 0 && g === '/ '))) break;
    if (isTitleWord(next) || (joined && last >= 0)) last = j + 1;
    else if (!ROMANCE_PARTICLES.has(next.t.toLowerCase())) break;
    j++;
  }
  return last;
}

function romanceName(s: string, ws: Word[], typeIdx: number, numberFirst: boolean): number {
  const last = nameAfterType(s, ws, typeIdx);
  if (last < 0) return -1;
  if (numberFirst) return tail(s, ws, last);
  // "Calle Mayor 5", "Via Roma, 10", "Rua Augusta, 1500", "Calle Mayor, nº 5"
  let k = last + 1;
  const g = gapAfter(s, ws, last);
  if (!(SP.test(g) || /^, ?$/.test(g))) return -1;
  if (/^(?:n|nº|no|num)$/i.test(ws[k]?.t ?? '') && /^[.º°]? ?$/.test(gapAfter(s, ws, k))) k++;
  if (!HOUSE.test(ws[k]?.t ?? '')) return -1;
  return tail(s, ws, k);
}

/** "Calle Mayor 5", "Via Roma 10", "Av. Paulista, 1578", "C/ Mayor 5". */
function romance(s: string, ws: Word[], i: number): Match | null {
  if (!ROMANCE_STREET_TYPES.has(ws[i]!.t)) return null;
  const end = romanceName(s, ws, i, false);
  return end > 0 ? { start: ws[i]!.s, endWord: end } : null;
}

export function findAddresses(s: string, ws: Word[], out: PiiSpan[]): void {
  for (let i = 0; i < ws.length; i++) {
    const m = english(s, ws, i) ?? germanic(s, ws, i) ?? french(s, ws, i) ?? romance(s, ws, i);
    if (m && m.endWord >= i) {
      out.push({ kind: 'ADDRESS', start: m.start, end: ws[m.endWord]!.e });
      i = m.endWord;
      continue;
    }
    const pc = ukPostcode(s, ws, i);
    if (pc > 0) {
      out.push({ kind: 'ADDRESS', start: ws[i]!.s, end: ws[pc]!.e });
      i = pc;
    }
  }
}
