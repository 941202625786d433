/**
 * What may never reach a log line, decided by name rather than by call site: a header, option
 * or error property whose key looks like a credential is replaced, and credentials embedded in
 * strings (URL query parameters, `Bearer …`, `"password":"…"` inside a serialized body) are cut
 * out. Every log call goes through here (see logger.ts), so a new call site cannot forget it.
 */

export const REDACTED = '[REDACTED]';

/** Header names that always carry credentials. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);
/** Any key containing one of these is treated as a credential, at any depth. */
const SECRET_PART = /token|secret|passw(?:or)?d|api[-_]?key|private[-_]?key|credential/i;
/**
 * Query parameter names that carry credentials besides the ones above: `key=` (API keys in
 * many public APIs), `sig`/`signature` (our own signed file links), `auth`.
 */
const SECRET_QUERY_NAMES = new Set(['key', 'sig', 'signature', 'auth', 'pass', 'pwd']);

export function isSecretKey(key: string): boolean {
  return SECRET_HEADERS.has(key.toLowerCase()) || SECRET_PART.test(key);
}

function isSecretQueryName(name: string): boolean {
  let n = name;
  try {
    n = decodeURIComponent(name);
  } catch {
    // a malformed escape: judge the raw name
  }
  return isSecretKey(n) || SECRET_QUERY_NAMES.has(n.toLowerCase());
}

// Linear-time patterns only (no nested quantifiers): log strings can be large and hostile.
/** `name=value` inside a URL's query string or fragment (after `?`, `&`, `;` or `#`). */
const QUERY_PARAM = /([?&;#])([^=&;#\s"'<>]{1,200})=([^&;#\s"'<>]*)/g;
/** HTTP auth schemes followed by their credential. */
const AUTH_SCHEME = /\b(Bearer|Basic|Digest|Token)\s+[A-Za-z0-9._~+/=-]{4,}/gi;
/**
 * `"key": "value"` or `'key': 'value'` as in a serialized body or a util.inspect dump, also
 * when that JSON is itself inside a JSON string (`\\"key\\":\\"value\\"`).
 */
const QUOTED_PAIR = /(\\*["'])([^"'\\\n]{1,200})\1(\s*:\s*)(\\*["'])((?:(?!\4)[^\n])*)\4/g;
/** `key=value` / `key: value` in free text (`Cookie: sid=…`, `password=hunter2`). */
const BARE_PAIR = /\b([A-Za-z][\w-]{0,80})(=|:\s?)(["']?)([^\s,;&"'<>]+)/g;
/** URL userinfo: `https://user:pass@host`. */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@:"'<>]+:[^/\s@"'<>]*@/gi;

/** Strings registered by forgetInLogs (zero-data-retention URLs), replaced wherever they appear. */
const forgotten = new Map<string, number>();

/**
 * Until `release` is called, `values` never appear in a log line of this process (they are
 * replaced by [REDACTED]). For data a request asked us not to keep, such as the URL of a
 * zero-data-retention scrape, whose errors may be logged after the request code has returned.
 */
export function forgetInLogs(values: Iterable<string>): () => void {
  const added: string[] = [];
  for (const v of values) {
    if (v.length < 4) continue; // too short to be a URL; replacing it would shred unrelated text
    forgotten.set(v, (forgotten.get(v) ?? 0) + 1);
    added.push(v);
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const v of added) {
      const n = (forgotten.get(v) ?? 1) - 1;
      if (n <= 0) forgotten.delete(v);
      else forgotten.set(v, n);
    }
  };
}

/**
 * The forms a URL takes in messages (as given, normalised, its path and query), for
 * forgetInLogs: an error may name any of them.
 */
export function urlForms(url: string): string[] {
  const values = [url];
  try {
    const u = new URL(url);
    values.push(u.href);
    if (u.pathname.length > 1 || u.search) values.push(`${u.pathname}${u.search}`);
  } catch {
    // not a URL: only the string itself
  }
  return values;
}

/**
 * Replaces every string registered by forgetInLogs with [REDACTED]. Also for text that leaves the
 * process other than as a log line: an activity's failure message, which Temporal stores.
 */
export function withoutForgotten(s: string): string {
  if (!forgotten.size || s.length === 0) return s;
  let out = s;
  // Longest first, so a URL goes before the path it contains.
  for (const v of [...forgotten.keys()].sort((a, b) => b.length - a.length)) {
    if (out.includes(v)) out = out.split(v).join(REDACTED);
  }
  return out;
}

/** Cuts credentials (and forgotten values) out of free text. */
export function scrubString(s: string): string {
  if (s.length === 0) return s;
  let out = withoutForgotten(s);
  if (out.includes('@')) out = out.replace(USERINFO, `$1${REDACTED}@`);
  if (out.includes('=')) {
    out = out.replace(QUERY_PARAM, (m, sep: string, name: string) => (isSecretQueryName(name) ? `${sep}${name}=${REDACTED}` : m));
  }
  out = out.replace(AUTH_SCHEME, (_m, scheme: string) => `${scheme} ${REDACTED}`);
  if (out.includes(':')) {
    out = out.replace(QUOTED_PAIR, (m, q: string, key: string, colon: string, vq: string) => (isSecretKey(key) ? `${q}${key}${q}${colon}${vq}${REDACTED}${vq}` : m));
  }
  if (out.includes('=') || out.includes(':')) {
    out = out.replace(BARE_PAIR, (m, key: string, sep: string, q: string) => (isSecretKey(key) ? `${key}${sep}${q}${REDACTED}` : m));
  }
  return out;
}

/** Error properties that hold the arguments of a failed call (a SQL statement's parameters). */
const ARGUMENT_PROPS = new Set(['params', 'parameters', 'args', 'arguments', 'body', 'requestBody', 'config']);
/**
 * Drizzle's query errors repeat the statement's parameters (page content, the caller's
 * headers) in their message after "params:": the message is kept up to there.
 */
function errorMessage(e: Error): string {
  const m = typeof e.message === 'string' ? e.message : String(e.message);
  const i = m.indexOf('\nparams:');
  return scrubString(i === -1 ? m : `${m.slice(0, i)}\nparams: ${REDACTED}`);
}

export interface RedactOptions {
  /** Objects deeper than this are summarised (default 8). */
  maxDepth?: number;
  /** Strings longer than this are cut (default 16 KiB): a page body never fills a log. */
  maxString?: number;
}

/** An Error as a plain object: type, message, code, stack frames, cause; credentials removed. */
export function serializeError(e: Error, opts: RedactOptions = {}): Record<string, unknown> {
  return redactValue(e, opts) as Record<string, unknown>;
}

/** A deep copy of `value` that is safe to log: see the file comment. */
export function redactValue(value: unknown, opts: RedactOptions = {}): unknown {
  const maxDepth = opts.maxDepth ?? 8;
  const maxString = opts.maxString ?? 16_384;
  const seen = new WeakSet<object>();

  const str = (s: string) => {
    const cut = s.length > maxString ? `${s.slice(0, maxString)}…[${s.length - maxString} more chars]` : s;
    return scrubString(cut);
  };

  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return str(v);
    if (v === null || typeof v !== 'object') {
      if (typeof v === 'bigint') return v.toString();
      if (typeof v === 'function' || typeof v === 'symbol') return undefined;
      return v;
    }
    if (seen.has(v)) return '[Circular]';
    if (depth > maxDepth) return Array.isArray(v) ? `[Array(${v.length})]` : '[Object]';
    seen.add(v);
    try {
      if (v instanceof Error) return error(v, depth);
      if (Buffer.isBuffer(v) || ArrayBuffer.isView(v)) return `[${v.constructor.name} ${(v as ArrayBufferView).byteLength} bytes]`;
      if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'Invalid Date' : v.toISOString();
      if (v instanceof URL) return str(v.href);
      if (Array.isArray(v)) {
        // Header lists as pairs (rawHeaders, [name, value][]): the value after a secret name goes.
        const items: unknown[] = [];
        for (let i = 0; i < v.length && i < 100; i++) {
          const x = v[i];
          items.push(walk(x, depth + 1));
          if (typeof x === 'string' && typeof v[i + 1] === 'string' && isSecretKey(x)) {
            items.push(REDACTED);
            i++;
          }
        }
        if (v.length > 100) items.push(`[${v.length - 100} more items]`);
        return items;
      }
      if (v instanceof Map) return walk(Object.fromEntries(v), depth);
      if (typeof (v as { entries?: unknown }).entries === 'function' && typeof Headers !== 'undefined' && v instanceof Headers) {
        return walk(Object.fromEntries(v.entries()), depth);
      }
      const out: Record<string, unknown> = {};
      let n = 0;
      for (const k of Object.keys(v)) {
        if (++n > 100) {
          out['…'] = `${Object.keys(v).length - 100} more keys`;
          break;
        }
        const x = (v as Record<string, unknown>)[k];
        out[k] = isSecretKey(k) && !(typeof x === 'number' || typeof x === 'boolean' || x == null) ? REDACTED : walk(x, depth + 1);
      }
      return out;
    } finally {
      seen.delete(v);
    }
  };

  const error = (e: Error, depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = { type: e.constructor?.name ?? e.name ?? 'Error', message: errorMessage(e) };
    if (e.name && e.name !== out.type) out.name = e.name;
    // Frames only: the stack's first line repeats the (unscrubbed) message.
    if (typeof e.stack === 'string') {
      const frames = e.stack.split('\n').filter((l) => /^\s+at /.test(l));
      if (frames.length) out.stack = frames.slice(0, 15).map((l) => scrubString(l.trim())).join('\n');
    }
    for (const k of Object.keys(e)) {
      if (k === 'message' || k === 'stack' || k === 'cause') continue;
      const x = (e as unknown as Record<string, unknown>)[k];
      if (ARGUMENT_PROPS.has(k)) out[k] = REDACTED;
      else if (isSecretKey(k) && !(typeof x === 'number' || typeof x === 'boolean' || x == null)) out[k] = REDACTED;
      else out[k] = walk(x, depth + 1);
    }
    if (e.cause !== undefined) out.cause = walk(e.cause, depth + 1);
    return out;
  };

  return walk(value, 0);
}
