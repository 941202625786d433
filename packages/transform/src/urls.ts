/**
 * Resolve `raw` against `base`; null when either is unusable. Attribute values
 * keep the surrounding whitespace browsers ignore, so it is trimmed first. An
 * empty base (an uploaded file has no URL) resolves only absolute references.
 */
export function resolveUrl(raw: string | undefined | null, base: string): string | null {
  if (raw == null) return null;
  const value = raw.trim();
  if (!value) return null;
  try {
    return (base ? new URL(value, base) : new URL(value)).href;
  } catch {
    return null;
  }
}

/**
 * The URL relative references are resolved against: the first `<base href>` (`scanPage`)
 * (itself resolved against the page URL), else the page URL. Must be read from
 * the original document, since cleaning removes `<head>`.
 */
export function documentBaseUrl(baseHref: string | undefined, pageUrl: string): string {
  const resolved = resolveUrl(baseHref, pageUrl);
  // A <base> pointing at javascript:, data: … cannot be a base for links.
  if (resolved && /^https?:/i.test(resolved)) return resolved;
  return pageUrl;
}

export interface SrcsetCandidate {
  url: string;
  /** Width descriptor (`640w`), when present. */
  width?: number;
  /** Pixel density (`2x`); a candidate without descriptors is 1x. */
  density: number;
}

const WS = /[\t\n\f\r ]/;

/**
 * Parse a srcset attribute following the HTML algorithm, so that URLs containing
 * commas (e.g. CDN transforms like `w_100,h_50`) are not split apart: the URL is
 * the run of non-whitespace, and only a comma *after* whitespace or at the very
 * end of the URL separates candidates.
 */
export function parseSrcset(srcset: string): SrcsetCandidate[] {
  const out: SrcsetCandidate[] = [];
  const s = srcset;
  let i = 0;
  while (i < s.length) {
    while (i < s.length && (WS.test(s[i]) || s[i] === ',')) i++;
    if (i >= s.length) break;
    const start = i;
    while (i < s.length && !WS.test(s[i])) i++;
    let url = s.slice(start, i);
    let descriptors = '';
    if (url.endsWith(',')) {
      url = url.replace(/,+$/, '');
    } else {
      // Descriptors run to the next comma that is not inside parentheses.
      const dStart = i;
      let depth = 0;
      while (i < s.length) {
        const c = s[i];
        if (c === '(') depth++;
        else if (c === ')') depth = Math.max(0, depth - 1);
        else if (c === ',' && depth === 0) break;
        i++;
      }
      descriptors = s.slice(dStart, i).trim();
      i++; // skip the comma
    }
    if (!url) continue;
    const cand: SrcsetCandidate = { url, density: 1 };
    let valid = true;
    for (const d of descriptors.split(/\s+/).filter(Boolean)) {
      const m = /^(\d*\.?\d+(?:e[+-]?\d+)?)([wxh])$/i.exec(d);
      if (!m) { valid = false; break; }
      const n = Number(m[1]);
      const kind = m[2].toLowerCase();
      if (kind === 'w') cand.width = n;
      else if (kind === 'x') cand.density = n;
    }
    if (valid) out.push(cand);
  }
  return out;
}

/**
 * The largest candidate: by width descriptor when any candidate has one,
 * otherwise by density (a bare URL counts as 1x). Ties keep the first.
 */
export function largestSrcsetCandidate(srcset: string | undefined | null): string | null {
  if (!srcset) return null;
  const cands = parseSrcset(srcset);
  if (!cands.length) return null;
  const withWidth = cands.filter((c) => c.width !== undefined);
  let best: SrcsetCandidate;
  if (withWidth.length) {
    best = withWidth.reduce((a, b) => ((b.width as number) > (a.width as number) ? b : a));
  } else {
    best = cands.reduce((a, b) => (b.density > a.density ? b : a));
  }
  return best.url;
}

export function isHttpUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}
