/**
 * Stage 1 of the layout pass: positioned text runs (from the PDF text layer or
 * from OCR words) → lines made of segments. A segment is a run of text on one
 * baseline without a wide horizontal gap; a wide gap (table columns, a
 * two-column gutter) starts a new segment of the same line. Nothing here needs
 * document-wide statistics, so the worker runs it page by page and keeps only
 * the (small) lines.
 */

/** Page units (PDF points for the text layer; OCR pixels are converted), origin top-left, y down. */
export interface Span {
  text: string;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  baseline: number;
  /** Font size (text layer) or an estimate from the line height (OCR). */
  size: number;
  /** OCR word confidence 0..100. */
  conf?: number;
  /** OCR words: always separated from the previous word by a space. */
  word?: boolean;
}

export interface Segment {
  text: string;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  baseline: number;
  size: number;
  /** Mean OCR confidence 0..100 weighted by characters, null for the text layer. */
  conf: number | null;
  /** Index of the line this segment belongs to (within its page). */
  line: number;
}

export interface Line {
  segs: Segment[];
  y0: number;
  y1: number;
  baseline: number;
  size: number;
}

/** A segment that is only a list marker stays glued to the text after it, however wide the gap. */
const MARKER_ONLY = /^(?:[•◦▪▫‣⁃∙·●○■□➢➤►▶✓✔\-–—*]|\(?\d{1,3}[.)]|\(?[a-z][.)])$/u;

/** Horizontal gap, in font sizes, above which a line is split into separate segments. */
export const SEGMENT_GAP_EM = 1.0;
/** Horizontal gap, in font sizes, above which two text-layer runs get a space between them. */
const SPACE_GAP_EM = 0.15;

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b\ufeff]/g;

/** Presentation forms pdf.js would normalize (ligatures ﬁ ﬂ, Arabic/Hebrew forms, small/fullwidth variants). */
const COMPAT = /[\ufb00-\ufdff\ufe70-\ufeff\uff00-\uffef]/;

export function cleanText(s: string): string {
  const t = s.replace(CONTROL, '').replace(/[\u00a0\u2000-\u200a\u202f\u205f\u3000\t\r\n]/g, ' ');
  return COMPAT.test(t) ? t.normalize('NFKC') : t;
}

interface Row {
  baseline: number;
  size: number;
  spans: Span[];
}

/** Group spans into lines (rows sharing a baseline) and split each line at wide gaps. */
export function buildLines(input: Span[]): Line[] {
  const spans: Span[] = [];
  for (const s of input) {
    const text = cleanText(s.text);
    if (!text.trim() || !(s.size > 0) || !(s.x1 >= s.x0) || !Number.isFinite(s.baseline)) continue;
    spans.push(text === s.text ? s : { ...s, text });
  }
  spans.sort((a, b) => a.baseline - b.baseline || a.x0 - b.x0);

  const rows: Row[] = [];
  for (const s of spans) {
    let row: Row | null = null;
    // Rows are built in baseline order, so only the last few can match.
    for (let i = rows.length - 1; i >= 0 && i >= rows.length - 3; i--) {
      const r = rows[i];
      if (Math.abs(r.baseline - s.baseline) <= 0.45 * Math.max(r.size, s.size) && Math.abs(r.baseline - s.baseline) < 0.9 * Math.min(r.size, s.size)) {
        row = r;
        break;
      }
    }
    if (!row) {
      rows.push({ baseline: s.baseline, size: s.size, spans: [s] });
    } else {
      row.spans.push(s);
      if (s.size > row.size) {
        row.size = s.size;
        row.baseline = s.baseline;
      }
    }
  }
  rows.sort((a, b) => a.baseline - b.baseline);

  const lines: Line[] = [];
  for (const row of rows) {
    row.spans.sort((a, b) => a.x0 - b.x0);
    const lineIndex = lines.length;
    const segs: Segment[] = [];
    let cur: SegmentBuilder | null = null;
    let prev: Span | null = null;
    for (const s of row.spans) {
      // Fake bold: the same text drawn twice a hair apart.
      if (prev && prev.text === s.text && Math.abs(prev.x0 - s.x0) < 0.2 * s.size) continue;
      if (cur && prev) {
        const size = Math.max(prev.size, s.size);
        const gap = s.x0 - cur.x1;
        if (gap > SEGMENT_GAP_EM * size && !MARKER_ONLY.test(cur.text.trim())) {
          segs.push(finish(cur, lineIndex));
          cur = null;
        } else {
          const needSpace = (s.word || prev.word || gap > SPACE_GAP_EM * size) && !/\s$/.test(cur.text) && !/^\s/.test(s.text);
          cur.add(s, needSpace);
        }
      }
      if (!cur) cur = new SegmentBuilder(s);
      prev = s;
    }
    if (cur) segs.push(finish(cur, lineIndex));
    const kept = segs.filter((g) => g.text.length > 0);
    if (!kept.length) continue;
    for (const g of kept) g.line = lines.length;
    lines.push(lineOf(kept));
  }
  return lines;
}

export function lineOf(segs: Segment[]): Line {
  let y0 = Infinity;
  let y1 = -Infinity;
  let main = segs[0];
  for (const g of segs) {
    y0 = Math.min(y0, g.y0);
    y1 = Math.max(y1, g.y1);
    if (g.text.length > main.text.length) main = g;
  }
  return { segs, y0, y1, baseline: main.baseline, size: main.size };
}

class SegmentBuilder {
  text: string;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  /** Characters per font size, to pick the dominant size and baseline. */
  private sizes = new Map<number, { chars: number; baseline: number }>();
  private confSum = 0;
  private confChars = 0;

  constructor(s: Span) {
    this.text = s.text;
    this.x0 = s.x0;
    this.x1 = s.x1;
    this.y0 = s.y0;
    this.y1 = s.y1;
    this.note(s);
  }

  add(s: Span, space: boolean): void {
    this.text += (space ? ' ' : '') + s.text;
    this.x1 = Math.max(this.x1, s.x1);
    this.y0 = Math.min(this.y0, s.y0);
    this.y1 = Math.max(this.y1, s.y1);
    this.note(s);
  }

  private note(s: Span): void {
    const n = s.text.trim().length;
    const key = Math.round(s.size * 2) / 2;
    const e = this.sizes.get(key);
    if (e) e.chars += n;
    else this.sizes.set(key, { chars: n, baseline: s.baseline });
    if (s.conf !== undefined && s.conf >= 0) {
      this.confSum += s.conf * n;
      this.confChars += n;
    }
  }

  dominant(): { size: number; baseline: number; conf: number | null } {
    let best = -1;
    let size = 0;
    let baseline = 0;
    for (const [k, v] of this.sizes) {
      if (v.chars > best || (v.chars === best && k > size)) {
        best = v.chars;
        size = k;
        baseline = v.baseline;
      }
    }
    return { size, baseline, conf: this.confChars ? this.confSum / this.confChars : null };
  }
}

function finish(b: SegmentBuilder, line: number): Segment {
  const d = b.dominant();
  return {
    text: b.text.replace(/ {2,}/g, ' ').trim(),
    x0: b.x0,
    x1: b.x1,
    y0: b.y0,
    y1: b.y1,
    baseline: d.baseline,
    size: d.size,
    conf: d.conf,
    line,
  };
}

const USABLE = /[\p{L}\p{N}]/gu;
const GARBAGE = /[\ufffd\ue000-\uf8ff\u0000-\u001f]/g;

/**
 * Letters and digits that carry meaning, and characters that say the text
 * layer is broken (replacement characters, private-use glyph codes, control
 * codes: fonts without a usable ToUnicode map). Run on raw span texts.
 */
export function textQuality(texts: Iterable<string>): { usable: number; garbage: number } {
  let usable = 0;
  let garbage = 0;
  for (const t of texts) {
    usable += t.match(USABLE)?.length ?? 0;
    garbage += t.match(GARBAGE)?.length ?? 0;
  }
  return { usable, garbage };
}
