/**
 * What Postgres text and jsonb cannot hold: the NUL character ("invalid byte sequence") and a
 * UTF-16 surrogate without its pair ("unsupported Unicode escape sequence"). Fetched pages and
 * uploaded documents may contain both (a NUL byte in a text file, a UTF-16 page cut mid-pair),
 * so everything written from them goes through `storable`: each such character becomes U+FFFD,
 * as an HTML parser would make it. Request bodies never get here with them (the API refuses
 * them with a 400, @wds/contracts/strings).
 */
const SUSPECT = /[\u0000\ud800-\udfff]/;
const BAD = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function storableText(s: string): string {
  return SUSPECT.test(s) ? s.replace(BAD, '\ufffd') : s;
}

/** A copy of `v` with every string (object keys too) storable; unchanged parts are shared, not copied. */
export function storable<T>(v: T): T {
  return fix(v, 0) as T;
}

function fix(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return storableText(v);
  // Deeper than any document we build: left as is (JSON.stringify would fail on a cycle anyway).
  if (v === null || typeof v !== 'object' || depth > 200) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x = fix(v[i], depth + 1);
      if (x !== v[i]) (out ??= v.slice())[i] = x;
    }
    return out ?? v;
  }
  // Dates, buffers and other instances serialize themselves.
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  let out: Record<string, unknown> | null = null;
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    const fx = fix(x, depth + 1);
    const fk = storableText(k);
    if (fx !== x || fk !== k) {
      out ??= { ...(v as Record<string, unknown>) };
      if (fk !== k) delete out[k];
      out[fk] = fx;
    }
  }
  return out ?? v;
}
