import { at, isAsciiAlnum } from '../text';
import type { PiiSpan } from '../types';

/**
 * Credentials: provider tokens with a documented prefix (AWS access key ids, GitHub, Slack,
 * Stripe secret keys, OpenAI-style `sk-` keys, Google API keys), JWTs, PEM private-key blocks,
 * and the value after a password/secret label. Candidates are found by fixed prefixes or labels;
 * each is then read with a bounded length, so the pass is O(n).
 */
const PREFIX = /(?:AKIA|ASIA|gh[pousr]_|github_pat_|xox[baprs]-|[sr]k_(?:live|test)_|sk-|AIza|eyJ)/g;
const TOKEN_RULES: RegExp[] = [
  /^(?:AKIA|ASIA)[A-Z0-9]{16}$/,
  /^gh[pousr]_[A-Za-z0-9]{36,251}$/,
  /^github_pat_[A-Za-z0-9_]{22,244}$/,
  /^xox[baprs]-[A-Za-z0-9-]{10,250}$/,
  /^[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}$/,
  /^sk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_-]{20,250}$/,
  /^AIza[0-9A-Za-z_-]{35}$/,
  /^eyJ[A-Za-z0-9_-]{5,2000}\.eyJ[A-Za-z0-9_-]{5,4000}\.[A-Za-z0-9_-]{10,2000}$/,
];
const tokenChar = (c: number, dots: boolean) => isAsciiAlnum(c) || c === 0x5f || c === 0x2d || (dots && c === 0x2e);
const MAX_TOKEN = 8192;

/** `password: hunter2`, `api_key="…"`: the value, when it is not a placeholder. */
const LABELLED = /\b(?:password|passwd|pwd|passwort|kennwort|mot de passe|contraseña|senha|api[_ -]?key|api[_ -]?secret|secret[_ -]?key|client[_ -]?secret|access[_ -]?token|auth[_ -]?token|bearer)["']?\s{0,3}[:=]\s{0,3}["']?([^\s"'<>`]{6,128})/gi;
const PLACEHOLDER = /^(?:\*+|x+|\.+|<.*>|\$\{.*\}|\{\{.*\}\}|your[_-].*|changeme|password|secret|example.*|none|null|undefined|true|false|redacted)$/i;

export function findSecrets(s: string, out: PiiSpan[]): void {
  PREFIX.lastIndex = 0;
  for (let m = PREFIX.exec(s); m; m = PREFIX.exec(s)) {
    const a = m.index;
    if (tokenChar(at(s, a - 1), false)) continue;
    const jwt = m[0] === 'eyJ';
    let e = a;
    while (e < s.length && tokenChar(s.charCodeAt(e), jwt) && e - a < MAX_TOKEN) e++;
    if (jwt) while (s.charCodeAt(e - 1) === 0x2e) e--;
    const tok = s.slice(a, e);
    if (TOKEN_RULES.some((r) => r.test(tok)) && /\d/.test(tok)) out.push({ kind: 'SECRET', start: a, end: e });
    PREFIX.lastIndex = Math.max(e, a + 1);
  }

  // The next "-----END " at or after a header: found once per header position, moving forward only.
  let end = -1;
  for (let from = 0; ; ) {
    const b = s.indexOf('-----BEGIN ', from);
    if (b < 0) break;
    const head = s.slice(b, b + 64);
    const m = /^-----BEGIN ((?:[A-Z]{1,10} ){0,3}PRIVATE KEY)-----/.exec(head);
    if (!m) {
      from = b + 11;
      continue;
    }
    const endMarker = `-----END ${m[1]}-----`;
    if (end !== -2 && end < b) end = s.indexOf('-----END ', b);
    if (end < 0) end = -2; // none left in the text
    // A key block is a few KB; an unterminated or absurdly long one is cut at its header.
    const closed = end >= 0 && end - b < 16_384 && s.startsWith(endMarker, end);
    const stop = closed ? end + endMarker.length : b + m[0].length;
    out.push({ kind: 'SECRET', start: b, end: stop });
    from = stop;
  }

  LABELLED.lastIndex = 0;
  for (let m = LABELLED.exec(s); m; m = LABELLED.exec(s)) {
    const value = m[1]!.replace(/[.,;)]+$/, '');
    if (value.length < 6 || PLACEHOLDER.test(value) || !/[A-Za-z]/.test(value) || !/[\d\W_]/.test(value)) continue;
    const start = m.index + m[0].length - m[1]!.length;
    out.push({ kind: 'SECRET', start, end: start + value.length });
  }
}
