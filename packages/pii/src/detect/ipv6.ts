import { isIPv6 } from 'node:net';
import { at, isAsciiAlnum } from '../text';
import type { PiiSpan } from '../types';

/**
 * IPv6 addresses: runs of hex digits, ':' and '.' (IPv4-mapped tails) of at most 45 characters,
 * at word boundaries, accepted by Node's parser, with at least two groups and a digit (so
 * "::", "::1" and words such as "dead::beef" are left alone). Longer runs are skipped whole: O(n).
 */
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
const isV6Char = (c: number) => isHex(c) || c === 0x3a || c === 0x2e;

export function findIpv6(s: string, out: PiiSpan[]): void {
  let i = 0;
  const len = s.length;
  while (i < len) {
    const c = s.charCodeAt(i);
    if (!isV6Char(c) || isAsciiAlnum(at(s, i - 1)) || at(s, i - 1) === 0x3a) {
      i++;
      continue;
    }
    let e = i;
    let colons = 0;
    while (e < len && isV6Char(s.charCodeAt(e)) && e - i <= 45) {
      if (s.charCodeAt(e) === 0x3a) colons++;
      e++;
    }
    if (colons < 2 || e - i > 45 || isAsciiAlnum(at(s, e))) {
      i = Math.max(e, i + 1);
      continue;
    }
    // A trailing '.' or ':' is punctuation ("… at fe80::1.").
    while (e > i && (s.charCodeAt(e - 1) === 0x2e || (s.charCodeAt(e - 1) === 0x3a && s.charCodeAt(e - 2) !== 0x3a))) e--;
    const cand = s.slice(i, e);
    const groups = cand.split(':').filter(Boolean);
    if (groups.length >= 2 && /\d/.test(cand) && isIPv6(cand)) out.push({ kind: 'IP_ADDRESS', start: i, end: e });
    i = Math.max(e, i + 1);
  }
}
