/** pdf.js text content → positioned spans in viewport space (points, origin top-left). */
import type { Span } from './lines';

/** The parts of pdf.js' TextItem / TextStyle read here. */
export interface TextItemLike {
  str?: string;
  transform?: number[];
  width?: number;
  fontName?: string;
}
export interface TextStyleLike {
  ascent?: number;
  descent?: number;
  vertical?: boolean;
}

function mul(m1: number[], m2: number[]): number[] {
  return [
    m1[0] * m2[0] + m1[2] * m2[1],
    m1[1] * m2[0] + m1[3] * m2[1],
    m1[0] * m2[2] + m1[2] * m2[3],
    m1[1] * m2[2] + m1[3] * m2[3],
    m1[0] * m2[4] + m1[2] * m2[5] + m1[4],
    m1[1] * m2[4] + m1[3] * m2[5] + m1[5],
  ];
}

/**
 * Keeps horizontal, left-to-right runs (as displayed, i.e. after the page's
 * /Rotate); rotated or vertical text (margin stamps, axis labels) is dropped.
 */
export function textItemsToSpans(
  items: readonly unknown[],
  styles: Record<string, TextStyleLike>,
  viewportTransform: number[],
): { spans: Span[]; dropped: number } {
  const spans: Span[] = [];
  let dropped = 0;
  for (const raw of items) {
    const item = raw as TextItemLike;
    if (typeof item.str !== 'string' || !item.transform || !item.str) continue;
    const tx = mul(viewportTransform, item.transform);
    const [a, b, c, d, e, f] = tx;
    const size = Math.hypot(c, d);
    const style = item.fontName ? styles[item.fontName] : undefined;
    if (!(a > 0) || Math.abs(b) > 0.05 * a || Math.abs(c) > 0.05 * Math.abs(d) || !(size > 0.5) || style?.vertical) {
      if (item.str.trim()) dropped++;
      continue;
    }
    // item.width is in user-space units along the text direction; the viewport (scale 1) keeps lengths.
    const width = Math.max(0, item.width ?? 0);
    let ascent = style?.ascent ?? 0.8;
    let descent = style?.descent ?? -0.2;
    if (!(ascent > 0.3 && ascent < 1.3)) ascent = 0.8;
    if (!(descent <= 0 && descent > -0.6)) descent = -0.2;
    spans.push({ text: item.str, x0: e, x1: e + width, y0: f - ascent * size, y1: f - descent * size, baseline: f, size });
  }
  return { spans, dropped };
}

/** "D:20240131120000+01'00'" → ISO 8601; anything else unchanged. */
export function pdfDate(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || !raw.trim()) return undefined;
  const m = /^D?:?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(Z|[+-]\d{2}'?\d{2}'?)?/.exec(raw.trim());
  if (!m) return raw.trim();
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', tz] = m;
  let zone = 'Z';
  if (tz && tz !== 'Z') {
    const t = tz.replace(/'/g, '');
    zone = `${t.slice(0, 3)}:${t.slice(3, 5) || '00'}`;
  }
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}${zone}`;
  return Number.isNaN(Date.parse(iso)) ? raw.trim() : new Date(iso).toISOString();
}
