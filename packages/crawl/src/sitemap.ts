import { gunzipSync } from 'node:zlib';

/**
 * Reads a sitemap or sitemap index (plain or gzip, by magic bytes). Only <loc> values are
 * needed; a tolerant scan is used instead of a full XML parser so broken sitemaps still yield
 * what they can.
 */
export interface SitemapEntries {
  /** Page URLs from a <urlset>. */
  urls: string[];
  /** Child sitemaps from a <sitemapindex>. */
  sitemaps: string[];
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&apos;': "'" };

export function parseSitemap(body: Buffer): SitemapEntries {
  const bytes = body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body, { maxOutputLength: 100 * 1024 * 1024 }) : body;
  const xml = bytes.toString('utf8');
  const isIndex = /<sitemapindex[\s>]/i.test(xml);
  const out: string[] = [];
  const re = /<loc>\s*(?:<!\[CDATA\[)?\s*([^<\]]+?)\s*(?:\]\]>)?\s*<\/loc>/gi;
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    const loc = m[1]!.replace(/&(amp|lt|gt|quot|apos);/g, (e) => ENTITIES[e]!);
    try {
      const u = new URL(loc);
      if (u.protocol === 'http:' || u.protocol === 'https:') out.push(u.href);
    } catch {
      // not a URL: skip it
    }
  }
  return isIndex ? { urls: [], sitemaps: out } : { urls: out, sitemaps: [] };
}
