import { CLOSINGS, GIVEN_NAMES, GREETINGS, HONORIFICS, NAME_LABELS, NAME_PARTICLES, NOT_NAME } from '../names-data';
import { before } from '../text';
import type { PiiMode, PiiSpan } from '../types';
import { gapAfter, isTitleWord, isUpperWord, type Word } from './words';

/**
 * Person names, by deterministic cues (a model pass can add what they miss):
 * - a title: "Mr. John Smith", "Frau Dr. Schmidt", "M. Dupont", "Sra. García" (the title stays);
 * - a known given name followed by a capitalised surname: "Anna Müller", "Jean-Pierre Martin";
 * - a label: "Name: …", "Ansprechpartner: …", "Author: …" (upper-case forms too);
 * - the line after a closing: "Best regards,\nJane Doe";
 * - aggressive mode: also a greeting's name ("Hi Tom,") and a given name alone after a label.
 * Each cue reads at most 5 words ahead: O(words).
 */
const SPACE = /^[ \u00a0]$/;
const JOIN = /^(?:-|'|’)$/;

/** Whether word j can continue a name. */
const namePart = (w: Word | undefined, upper: boolean) => !!w && !NOT_NAME.has(w.t) && (isTitleWord(w) || (upper && isUpperWord(w)));

/**
 * The last word index of the name starting at word i (which must be a name part), taking up to
 * `max` parts joined by spaces, hyphens or apostrophes, with particles (van, de la) and initials
 * ("J.") between them. -1 when word i does not start a name.
 */
function nameEnd(s: string, ws: Word[], i: number, max: number, upper = false): number {
  if (!namePart(ws[i], upper)) return -1;
  let end = i;
  let parts = 1;
  let j = i;
  while (parts < max && j + 1 < ws.length) {
    const gap = gapAfter(s, ws, j);
    const next = ws[j + 1]!;
    if (JOIN.test(gap) && (namePart(next, upper) || (upper && isUpperWord(next)))) {
      j++;
      end = j;
      continue; // a hyphenated or apostrophe part does not count as a new part
    }
    if (gap === '. ' && ws[j]!.t.length === 1 && j > i) {
      // an initial ("John F. Kennedy") continues
    } else if (!SPACE.test(gap)) break;
    if (NAME_PARTICLES.has(next.t) && j + 2 < ws.length && SPACE.test(gapAfter(s, ws, j + 1))) {
      // particles: up to two ("van der", "de la") before a capitalised part
      let k = j + 1;
      if (NAME_PARTICLES.has(ws[k + 1]!.t) && SPACE.test(gapAfter(s, ws, k + 1))) k++;
      if (!namePart(ws[k + 1], upper)) break;
      j = k + 1;
    } else if (next.t.length === 1 && /\p{Lu}/u.test(next.t) && gapAfter(s, ws, j + 1) === '. ' && namePart(ws[j + 2], upper)) {
      j += 1; // initial, its surname follows next round
      end = j;
      parts++;
      continue;
    } else if (namePart(next, upper)) j++;
    else break;
    end = j;
    parts++;
  }
  return end;
}

/** Labels by their last word: one map look-up per candidate instead of a scan of the list. */
const LABELS_BY_LAST = new Map<string, string[]>();
for (const l of NAME_LABELS) {
  const last = l.slice(l.lastIndexOf(' ') + 1);
  LABELS_BY_LAST.set(last, [...(LABELS_BY_LAST.get(last) ?? []), l]);
}
const LABEL_GAP = /^[\s:–—-]$/;

const labelBefore = (s: string, w: Word) => {
  if (!LABEL_GAP.test(s.charAt(w.s - 1))) return false; // a label ends with ':' or a space
  const raw = before(s, w.s, 40);
  const pre = raw.replace(/[\s:–—-]+$/, '');
  const lastWord = /[\p{L}]+$/u.exec(pre)?.[0];
  const candidates = lastWord ? LABELS_BY_LAST.get(lastWord) : undefined;
  return !!candidates?.some((l) => pre.endsWith(l) && !/\p{L}/u.test(pre.charAt(pre.length - l.length - 1)));
};

/** Whether word w starts a line (after optional list or quote markers): where a signature's name is. */
function atLineStart(s: string, w: Word): boolean {
  for (let i = w.s - 1, n = 0; i >= 0 && n < 6; i--, n++) {
    const c = s[i]!;
    if (c === '\n') return true;
    if (c !== ' ' && c !== '\t' && c !== '-' && c !== '*' && c !== '>') return false;
  }
  return false;
}

const closingLineBefore = (s: string, w: Word) => {
  if (!atLineStart(s, w)) return false;
  const pre = before(s, w.s, 48);
  const m = /([\p{L} ]+)[,!.]?[ \t]*\n[ \t]*(?:[-*>] ?)?$/u.exec(pre);
  return !!m && CLOSINGS.includes(m[1]!.trim());
};

export function findNames(s: string, ws: Word[], mode: PiiMode, out: PiiSpan[]): void {
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i]!;
    const gap = i + 1 < ws.length ? gapAfter(s, ws, i) : '';
    let start = -1;
    let end = -1;
    if (HONORIFICS.has(w.t) && (gap === '. ' || (SPACE.test(gap) && w.t !== 'M' && w.t !== 'Fr'))) {
      // "Frau Dr. Schmidt": a second title is skipped.
      let k = i + 1;
      if (HONORIFICS.has(ws[k]?.t ?? '') && gapAfter(s, ws, k) === '. ') k++;
      end = nameEnd(s, ws, k, 3);
      start = k;
    } else if (GIVEN_NAMES.has(w.t) && SPACE.test(gap) && namePart(ws[i + 1], false)) {
      end = nameEnd(s, ws, i, 4);
      start = i;
    } else if ((isTitleWord(w) || isUpperWord(w)) && !NOT_NAME.has(w.t) && labelBefore(s, w)) {
      const upper = isUpperWord(w);
      end = nameEnd(s, ws, i, 3, upper);
      // One word after a label is a name only when it is a known given name (aggressive: any).
      if (end === i && !GIVEN_NAMES.has(w.t) && mode !== 'aggressive') end = -1;
      start = i;
    } else if (isTitleWord(w) && closingLineBefore(s, w)) {
      end = nameEnd(s, ws, i, 3);
      if (end === i && !GIVEN_NAMES.has(w.t)) end = -1;
      start = i;
    } else if (mode === 'aggressive' && GREETINGS.has(w.t) && SPACE.test(gap) && namePart(ws[i + 1], false)) {
      end = nameEnd(s, ws, i + 1, 3);
      start = i + 1;
    } else if (mode === 'aggressive' && GIVEN_NAMES.has(w.t) && !/^[.!?]\s/.test(s.slice(Math.max(0, w.s - 2), w.s))) {
      start = i;
      end = i;
    }
    if (start < 0 || end < start) continue;
    out.push({ kind: 'PERSON', start: ws[start]!.s, end: ws[end]!.e });
    i = end;
  }
}
