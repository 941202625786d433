import { at, isAsciiAlnum, isLetter } from '../text';
import type { PiiSpan } from '../types';

/**
 * E-mail addresses: from each '@', the local part is read backwards (at most 64 characters) and
 * the domain forwards (labels of letters, digits and '-', at most 253 characters, a top-level
 * domain of two or more letters). Both reads are bounded, and scanning resumes after the match:
 * linear. Markdown escapes inside the local part (`john\_doe`) are part of it.
 */
const LOCAL_PUNCT = new Set([0x2e, 0x5f, 0x25, 0x2b, 0x2d, 0x27]); // . _ % + - '
/** "icon@2x.png" names a file, not a mailbox. */
const FILE_TLDS = new Set(['png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'avif', 'css', 'js', 'mjs', 'ts', 'json', 'pdf', 'zip', 'ico', 'bmp', 'tif', 'tiff', 'mp4', 'webm', 'html', 'htm', 'php', 'txt']);

const localChar = (c: number) => isAsciiAlnum(c) || LOCAL_PUNCT.has(c) || (c >= 0xc0 && isLetter(c));

export function findEmails(s: string, out: PiiSpan[]): void {
  let from = 0;
  for (;;) {
    const atSign = s.indexOf('@', from);
    if (atSign < 0) return;
    from = atSign + 1;
    // Local part, backwards.
    let a = atSign;
    while (a > 0 && atSign - a < 64) {
      const c = s.charCodeAt(a - 1);
      if (localChar(c)) a--;
      else if (c === 0x5f && at(s, a - 2) === 0x5c) a -= 2; // "\_"
      else if (c === 0x5c && localChar(at(s, a))) a--; // the backslash of an escape
      else break;
    }
    while (a < atSign && (s.charCodeAt(a) === 0x2e || s.charCodeAt(a) === 0x5c)) a++; // no leading dot
    if (a === atSign || (a > 0 && localChar(s.charCodeAt(a - 1)))) continue; // empty, or longer than 64
    // Domain, forwards: labels separated by single dots.
    let b = atSign + 1;
    let lastDot = -1;
    while (b < s.length && b - atSign <= 253) {
      const c = s.charCodeAt(b);
      if (isAsciiAlnum(c) || c === 0x2d || (c >= 0xc0 && isLetter(c))) b++;
      else if (c === 0x2e && b > atSign + 1 && s.charCodeAt(b - 1) !== 0x2e && isAsciiAlnum(at(s, b + 1))) {
        lastDot = b;
        b++;
      } else break;
    }
    if (lastDot < 0) continue;
    const tld = s.slice(lastDot + 1, b);
    if (tld.length < 2 || !/^[A-Za-z]+$/.test(tld) || FILE_TLDS.has(tld.toLowerCase())) continue;
    out.push({ kind: 'EMAIL', start: a, end: b });
    from = b;
  }
}
