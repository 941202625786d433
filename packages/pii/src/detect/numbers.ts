import { bsnValid, cardNetwork, cpfValid, dniValid, isbn13Valid, luhn, nirValid, ssnValid, steuerIdValid } from '../checksums';
import { at, before, isDigit, isUpper, isWordChar, type RangeSet } from '../text';
import type { PiiKind, PiiMode, PiiSpan } from '../types';

/**
 * Everything written with digit groups: phone numbers, payment cards, IPv4 addresses and the
 * numeric national ids (SSN, CPF, NIR, Steuer-ID, BSN, DNI). One forward pass reads a *run*:
 * up to 10 digit groups (each at most 20 digits) joined by one separator (space, '-', '.', '/',
 * parentheses) on one line, with an optional leading '+' or '('. Each run is bounded, its
 * prefixes are classified longest first, and the scan resumes after what was decided: O(n).
 */

interface Run {
  start: number;
  plus: boolean;
  paren: boolean;
  groups: string[];
  /** Start and end offsets of each group. */
  gs: number[];
  ge: number[];
  /** Separator before group i+1, normalised (nbsp → space). */
  seps: string[];
}

const SEP_CHARS = new Set([0x20, 0xa0, 0x2d, 0x2e, 0x2f, 0x28, 0x29]); // space nbsp - . / ( )
const VALID_SEPS = new Set([' ', '-', '.', '/', '(', ')', ' (', ') ', ')-', ') -', ' - ', ' / ', '-(', ' ((']);
const MAX_GROUPS = 10;
const MAX_GROUP_DIGITS = 20;

function readRun(s: string, start: number): Run | { skipTo: number } {
  let i = start;
  const plus = s.charCodeAt(i) === 0x2b;
  const paren = s.charCodeAt(i) === 0x28;
  if (plus || paren) i++;
  const run: Run = { start, plus, paren, groups: [], gs: [], ge: [], seps: [] };
  for (;;) {
    const g0 = i;
    while (i < s.length && isDigit(s.charCodeAt(i)) && i - g0 < MAX_GROUP_DIGITS) i++;
    if (isDigit(at(s, i))) {
      // A longer digit string is a number, not an identifier: skip all of it.
      while (isDigit(at(s, i))) i++;
      return { skipTo: i };
    }
    run.groups.push(s.slice(g0, i));
    run.gs.push(g0);
    run.ge.push(i);
    if (run.groups.length === MAX_GROUPS) break;
    let j = i;
    let sep = '';
    while (j < s.length && j - i < 3 && SEP_CHARS.has(s.charCodeAt(j))) {
      sep += s.charCodeAt(j) === 0xa0 ? ' ' : s[j];
      j++;
    }
    if (!sep || !isDigit(at(s, j)) || !VALID_SEPS.has(sep)) break;
    run.seps.push(sep.trim() === '' ? ' ' : sep);
    i = j;
  }
  return run;
}

// Labels, read in the 32 characters before a run.
const PHONE_LABEL = /(?:(?:\btel|\bphone|\bfon|\btelefon|t[ée]l[ée]phone|\btél|tel[ée]fono|telefone|\bfax|\bmobile?|\bmobil|\bhandy|\bcell|\bcall|\bruf|\bwhatsapp|\bgsm|\bportable|\bcelular|\bcellulare|\bnumero|\bnúmero|\bnummer|\bhotline|☎|📞)[^\n\d]{0,16}|\b[tpmf]\s?[.:]\s{0,2})$/u;
/** An immediate label naming another kind of number vetoes a phone reading. */
const NUMBER_LABEL = new RegExp(`(?:order|bestell\\w*|commande|pedido|ordine|invoice|rechnung\\w*|facture|factura|fattura|customer|kunden\\w*|client|account|konto|compte|cuenta|conto|ref(?:erence|erenz)?|tracking|sendung\\w*|sku|art(?:ikel)?\\.?[- ]?nr|item|isbn|ean|gtin|upc|serial|serien\\w*|model|modell|part|case|ticket|vorgang|aktenzeichen|dossier|id|nr|no|n°|nº|#|plz|zip|postcode|postal|iban|bic|swift|blz|sort code|routing|version|build|iva|p\\.\\s?iva|vat|ust-?id\\w*|tva|nif|cif|siret|siren|pedido|section|abschnitt)\\.?(?:\\s+(?:number|nummer|número|numero|numéro|no\\.?|nr\\.?|n[°º]\\.?))?\\s*[:#]?\\s*$`);
const CARD_LABEL = /(?:card|karte|carte|tarjeta|carta|kreditkarte|visa|mastercard|amex|cc|pan)\b[^\n]{0,16}$/;
const SSN_LABEL = /(?:ssn|social security|sozialversicherung)[^\n]{0,16}$/;
const STEUER_LABEL = /(?:steuer|id-?nr|identifikationsnummer|tax id|tin\b|st\.?-?idnr)[^\n]{0,24}$/;
const BSN_LABEL = /(?:bsn|burgerservicenummer|sofinummer|sofi-nummer)[^\n]{0,16}$/;
const CPF_LABEL = /\bcpf\b[^\n]{0,24}$/;
const VERSION_LABEL = /(?:\bv|version|ver\.|release|build|firmware|rev\.?|section|sect\.|§|chapter|kapitel|article|art\.|paragraph|para\.|step|table|figure|fig\.)\s*$/;

const ISBN_LABEL = /isbn|ean\b|gtin/;

/**
 * Whether a label pattern matches the text before a run, each pattern tested at most once per
 * run (the prefixes of a run share it; the patterns are the detector's main cost).
 */
type Label = (re: RegExp) => boolean;
function labelsOf(pre: string): Label {
  const memo = new Map<RegExp, boolean>();
  return (re) => {
    let v = memo.get(re);
    if (v === undefined) memo.set(re, (v = re.test(pre)));
    return v;
  };
}
const TEL = labelsOf('tel:');

const lengths = (r: Run, k: number) => r.groups.slice(0, k).map((g) => g.length).join(',');
const sepsOf = (r: Run, k: number) => r.seps.slice(0, k - 1);
const uniform = (seps: string[]) => seps.every((x) => x === seps[0]);

function isDate(r: Run, k: number): boolean {
  if (k !== 3 || !uniform(sepsOf(r, k)) || !['.', '/', '-'].includes(r.seps[0]!)) return false;
  const [a, b, c] = r.groups.map(Number) as [number, number, number];
  const [la, , lc] = r.groups.map((g) => g.length);
  if (la === 4) return a >= 1000 && b >= 1 && b <= 12 && c >= 1 && c <= 31;
  if (la! > 2 || (lc !== 2 && lc !== 4)) return false;
  return ((a >= 1 && a <= 31 && b >= 1 && b <= 12) || (a >= 1 && a <= 12 && b >= 1 && b <= 31));
}

function isIpv4(r: Run, k: number): boolean {
  if (k !== 4 || !sepsOf(r, k).every((x) => x === '.')) return false;
  return r.groups.slice(0, 4).every((g) => g.length <= 3 && Number(g) <= 255 && (g === '0' || g[0] !== '0'));
}

const CARD_GROUPINGS = new Set(['4,4,4,4', '4,4,4,4,3', '4,6,5', '4,6,4', '4,4,4,4,2', '4,4,4,1', '4,4,5', '4,4,4,3']);

function isNanp(r: Run, k: number, d: string): boolean {
  const ls = lengths(r, k);
  const body = ls === '1,3,3,4' && d[0] === '1' ? d.slice(1) : ls === '3,3,4' ? d : null;
  if (!body) return false;
  // Area code and exchange never start with 0 or 1.
  return body[0]! >= '2' && body[3]! >= '2' && (r.paren || uniform(sepsOf(r, k)) || ls === '1,3,3,4');
}

function isPhone(r: Run, k: number, d: string, pre: Label, mode: PiiMode): boolean {
  const n = d.length;
  const grouped = k > 1;
  // "089/12345678": a trunk-0 area code and a slash is how German-speaking pages write phones, even after "Bestellung:".
  const areaSlash = k === 2 && r.seps[0] === '/' && d[0] === '0' && r.groups[0]!.length >= 2 && r.groups[0]!.length <= 5 && n >= 9 && n <= 12;
  if (pre(NUMBER_LABEL) && !areaSlash) return false;
  const labelled = pre(PHONE_LABEL);
  if (r.plus) return n >= 8 && n <= 15 && d[0] !== '0';
  if (d.startsWith('00')) return n - 2 >= 8 && n - 2 <= 15 && d[2] !== '0' && (grouped || labelled);
  // A national number with its trunk 0 (most of Europe, UK, Brazil, …).
  if (d[0] === '0') return n >= 9 && n <= 12 && (grouped || labelled);
  if (isNanp(r, k, d)) return true;
  // Brazil's "(11) 91234-5678", Spain's "912 345 678".
  if (r.paren && r.groups[0]!.length === 2 && (n === 10 || n === 11)) return true;
  const ls = lengths(r, k);
  // Unlabelled mobile shapes ("612 34 56 78") only as a whole run: a prefix of a longer one is another number (SIRET "732 829 320 00074").
  if ((ls === '3,3,3' || ls === '3,2,2,2') && '6789'.includes(d[0]!) && uniform(sepsOf(r, k)) && k === r.groups.length) return true;
  if (labelled) return n >= 6 && n <= 15;
  return mode === 'aggressive' && grouped && n >= 8 && n <= 15 && !isDate(r, k);
}

/** The kind of the first k groups of a run, or null; 'skip' when they are known not to be personal data. */
function classify(r: Run, k: number, pre: Label, mode: PiiMode, afterCode: boolean): PiiKind | 'skip' | null {
  const d = r.groups.slice(0, k).join('');
  const n = d.length;
  const seps = sepsOf(r, k);
  const ls = lengths(r, k);
  if (isDate(r, k)) return 'skip';
  if (isIpv4(r, k)) return pre(VERSION_LABEL) ? 'skip' : 'IP_ADDRESS';
  if (k >= 2 && seps.every((x) => x === '.') && pre(VERSION_LABEL)) return 'skip';
  if (pre(ISBN_LABEL) || (n === 13 && seps.every((x) => x === '-') && isbn13Valid(d))) return 'skip';
  if (r.plus) return isPhone(r, k, d, pre, mode) ? 'PHONE' : null;
  // "(0171) 234567" is a phone; otherwise the parenthesis is punctuation ("(4111 1111 1111 1111)").
  if (r.paren && isPhone(r, k, d, pre, mode)) return 'PHONE';

  if (n >= 12 && n <= 19 && (k === 1 || (uniform(seps) && (seps[0] === ' ' || seps[0] === '-') && CARD_GROUPINGS.has(ls))) && cardNetwork(d) && luhn(d)) {
    // Unusual lengths written as one block are common for other numbers: they need a label.
    if (!(k === 1 && (n <= 13 || n >= 17)) || pre(CARD_LABEL)) return 'CREDIT_CARD';
  }
  if (ls === '3,2,4' && uniform(seps) && (seps[0] === '-' || seps[0] === ' ') && ssnValid(d)) {
    if (seps[0] === '-' || pre(SSN_LABEL)) return 'NATIONAL_ID';
  }
  if (k === 1 && n === 9 && pre(SSN_LABEL) && ssnValid(d)) return 'NATIONAL_ID';
  if (ls === '3,3,3,2' && seps.join('') === '..-' && cpfValid(d)) return 'NATIONAL_ID';
  if (k === 1 && n === 11 && pre(CPF_LABEL) && cpfValid(d)) return 'NATIONAL_ID';
  if (n === 15 && (k === 1 || ls === '1,2,2,2,3,3,2') && nirValid(d)) return 'NATIONAL_ID';
  if (n === 11 && (k === 1 || ls === '2,3,3,3') && steuerIdValid(d) && (pre(STEUER_LABEL) || mode === 'aggressive')) return 'NATIONAL_ID';
  if (n === 9 && (k === 1 || ((ls === '4,2,3' || ls === '3,3,3') && uniform(seps))) && bsnValid(d) && (pre(BSN_LABEL) || mode === 'aggressive')) return 'NATIONAL_ID';
  // After a word mixing letters and digits ("1Z 999 AA1 01 2345 6784") the digits continue a code.
  if (afterCode && !pre(PHONE_LABEL)) return null;
  return isPhone(r, k, d, pre, mode) ? 'PHONE' : null;
}

/** Whether the word just before `start` (one space away) mixes letters and digits, like a tracking or part code. */
function afterCodeWord(s: string, start: number): boolean {
  if (at(s, start - 1) !== 0x20) return false;
  let a = start - 1;
  let digits = 0;
  let letters = 0;
  while (a > 0 && start - a <= 12 && isWordChar(s.charCodeAt(a - 1))) {
    if (isDigit(s.charCodeAt(a - 1))) digits++;
    else letters++;
    a--;
  }
  return digits > 0 && letters > 0;
}

/** A DNI written as 8 digits and its letter ("12345678Z", "12345678-Z"): the letter ends the run. */
function dniAt(s: string, r: Run): number {
  if (r.groups.length !== 1 || r.groups[0]!.length !== 8 || r.plus || r.paren) return -1;
  let j = r.ge[0]!;
  if (s.charCodeAt(j) === 0x2d || s.charCodeAt(j) === 0x20) j++;
  if (!isUpper(at(s, j)) || isWordChar(at(s, j + 1))) return -1;
  return dniValid(r.groups[0]! + s[j]) ? j + 1 : -1;
}

export function findNumbers(s: string, urls: RangeSet, mode: PiiMode, out: PiiSpan[]): void {
  let i = 0;
  const len = s.length;
  while (i < len) {
    const c = s.charCodeAt(i);
    if (!isDigit(c) || isWordChar(at(s, i - 1))) {
      i++;
      continue;
    }
    let start = i;
    const p = at(s, i - 1);
    if ((p === 0x2b || p === 0x28) && !isWordChar(at(s, i - 2))) start = i - 1;
    // Inside a link target only a tel: number is personal data.
    const inUrl = urls.contains(start);
    const tel = inUrl && /tel:\+?$/.test(before(s, i, 6));
    const r = readRun(s, start);
    if ('skipTo' in r) {
      i = r.skipTo;
      continue;
    }
    if (inUrl && !tel) {
      // A host written as an IPv4 address is one; every other number in a URL is an id or a path.
      if (isIpv4(r, 4) && !isWordChar(at(s, r.ge[3]!))) out.push({ kind: 'IP_ADDRESS', start: r.gs[0]!, end: r.ge[3]! });
      i = r.ge[r.groups.length - 1]!;
      while (i < len && isWordChar(s.charCodeAt(i))) i++;
      continue;
    }
    // The run must end at a word boundary (a DNI's letter aside).
    const dniEnd = dniAt(s, r);
    if (dniEnd > 0) {
      out.push({ kind: 'NATIONAL_ID', start: r.gs[0]!, end: dniEnd });
      i = dniEnd;
      continue;
    }
    const k0 = isWordChar(at(s, r.ge[r.groups.length - 1]!)) ? r.groups.length - 1 : r.groups.length;
    const pre = labelsOf(before(s, start));
    const afterCode = afterCodeWord(s, start);
    let decided = 0;
    for (let k = k0; k >= 1; k--) {
      const kind = tel ? (isPhone(r, k, r.groups.slice(0, k).join(''), TEL, mode) ? 'PHONE' : null) : classify(r, k, pre, mode, afterCode);
      if (kind === null) continue;
      // An opening parenthesis belongs to a phone number only.
      if (kind !== 'skip') out.push({ kind, start: kind === 'PHONE' ? r.start : r.gs[0]!, end: r.ge[k - 1]! });
      decided = k;
      break;
    }
    if (decided) {
      i = r.ge[decided - 1]!;
      continue;
    }
    // Nothing starts here: go on at the next group that stands apart (after a space), unless
    // the run continues a code ("DE89 3704 0044 …" with a bad check): then all of it is the code.
    let next = r.groups.length;
    for (let g = 1; g < r.groups.length && !afterCode; g++) {
      if (r.seps[g - 1]!.startsWith(' ') || r.seps[g - 1]!.endsWith(' ')) {
        next = g;
        break;
      }
    }
    if (next < r.groups.length) {
      i = r.gs[next]!;
      continue;
    }
    i = r.ge[r.groups.length - 1]!;
    // Letters or digits right after the run belong to the same word: skip the rest of it.
    while (i < len && isWordChar(s.charCodeAt(i))) i++;
  }
}
