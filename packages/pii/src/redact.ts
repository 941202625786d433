import { createHmac } from 'node:crypto';
import { findAddresses } from './detect/addresses';
import { findCodes } from './detect/codes';
import { findEmails } from './detect/email';
import { findIpv6 } from './detect/ipv6';
import { findNames } from './detect/names';
import { findNumbers } from './detect/numbers';
import { findSecrets } from './detect/secrets';
import { wordsOf } from './detect/words';
import { chunks, RangeSet, urlRanges } from './text';
import { BUCKET_KINDS, PII_BUCKETS, type PiiKind, type PiiSpan, type RedactOptions, type RedactResult } from './types';

/** The kinds the options ask for (all by default). */
export function kindsOf(o: Pick<RedactOptions, 'entities'>): Set<PiiKind> {
  const buckets = o.entities?.length ? o.entities : PII_BUCKETS;
  return new Set(buckets.flatMap((b) => BUCKET_KINDS[b]));
}

/**
 * Every PII span of `text` the deterministic detectors find, sorted and without overlaps (at an
 * overlap the span starting first wins, the longer one at a tie). Linear in the text: each
 * detector is one forward pass with bounded look-ahead (README: "Linear time").
 */
export function findPii(text: string, o: RedactOptions = {}): PiiSpan[] {
  const kinds = kindsOf(o);
  const mode = o.mode ?? 'fast';
  const found: PiiSpan[] = [];
  const urls = new RangeSet(urlRanges(text));
  const has = (...k: PiiKind[]) => k.some((x) => kinds.has(x));
  if (has('EMAIL')) findEmails(text, found);
  if (has('PHONE', 'CREDIT_CARD', 'NATIONAL_ID', 'IP_ADDRESS')) findNumbers(text, urls, mode, found);
  if (has('IBAN', 'NATIONAL_ID')) findCodes(text, urls, found);
  if (has('IP_ADDRESS')) findIpv6(text, found);
  if (has('SECRET')) findSecrets(text, found);
  if (has('PERSON', 'ADDRESS')) {
    for (const [a, b] of chunks(text)) {
      const ws = wordsOf(text, a, b);
      const local: PiiSpan[] = [];
      if (has('PERSON')) findNames(text, ws, mode, local);
      if (has('ADDRESS')) findAddresses(text, ws, local);
      for (const sp of local) if (!urls.contains(sp.start)) found.push(sp);
    }
  }
  return resolve(found.filter((sp) => kinds.has(sp.kind) && sp.end > sp.start));
}

function resolve(spans: PiiSpan[]): PiiSpan[] {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: PiiSpan[] = [];
  for (const sp of spans) {
    const last = out[out.length - 1];
    if (last && sp.start < last.end) continue;
    out.push(sp);
  }
  return out;
}

/** The canonical form a `hash` token is computed from: the same address or number written differently hashes the same. */
function canonical(kind: PiiKind, value: string): string {
  switch (kind) {
    case 'EMAIL':
      return value.replace(/\\/g, '').toLowerCase();
    case 'PHONE':
      return value.replace(/\D/g, '');
    case 'CREDIT_CARD':
    case 'IBAN':
    case 'NATIONAL_ID':
      return value.replace(/[\s.\-/]/g, '').toUpperCase();
    default:
      return value.replace(/\s+/g, ' ').toLowerCase();
  }
}

/** The replacement of one span. */
export function replacement(kind: PiiKind, value: string, o: Pick<RedactOptions, 'replaceStyle' | 'hashKey'>): string {
  switch (o.replaceStyle ?? 'tag') {
    case 'mask':
      return '*'.repeat([...value].length);
    case 'remove':
      return '';
    case 'hash':
      return `<${kind}_${createHmac('sha256', o.hashKey ?? '').update(`${kind}:${canonical(kind, value)}`).digest('hex').slice(0, 12)}>`;
    default:
      return `<${kind}>`;
  }
}

/** Replaces the spans (sorted, disjoint) in one pass. */
export function applySpans(text: string, spans: readonly PiiSpan[], o: Pick<RedactOptions, 'replaceStyle' | 'hashKey'> = {}): RedactResult {
  const parts: string[] = [];
  const counts: RedactResult['counts'] = {};
  let at = 0;
  for (const sp of spans) {
    parts.push(text.slice(at, sp.start), replacement(sp.kind, text.slice(sp.start, sp.end), o));
    counts[sp.kind] = (counts[sp.kind] ?? 0) + 1;
    at = sp.end;
  }
  parts.push(text.slice(at));
  return { text: parts.join(''), spans: [...spans], counts };
}

/** Finds and replaces PII in `text` (markdown or plain text). */
export function redact(text: string, o: RedactOptions = {}): RedactResult {
  return applySpans(text, findPii(text, o), o);
}

/**
 * Redacts every occurrence of the given strings (what a model pass reported), longest first so a
 * full name wins over its parts. Occurrences are found with indexOf: O(n) per value.
 */
export function redactValues(text: string, values: ReadonlyArray<{ kind: PiiKind; text: string }>, o: Pick<RedactOptions, 'replaceStyle' | 'hashKey'> = {}): RedactResult {
  const spans: PiiSpan[] = [];
  const sorted = [...values].filter((v) => v.text.trim().length >= 2).sort((a, b) => b.text.length - a.text.length);
  for (const v of sorted) {
    for (let i = text.indexOf(v.text); i >= 0; i = text.indexOf(v.text, i + v.text.length)) {
      spans.push({ kind: v.kind, start: i, end: i + v.text.length });
    }
  }
  return applySpans(text, resolve(spans), o);
}
