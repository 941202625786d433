/**
 * Stage 2 of the layout pass: the lines of every parsed page → typed blocks in
 * reading order → markdown with exact block spans. Needs the whole document
 * (body font size, heading sizes, running headers/footers repeated across
 * pages), so it runs once after extraction, on lines only.
 */
import type { Line, Segment } from './lines';
import { lineOf } from './lines';
import type { PdfBlock, PdfBlockType, PdfPage, PdfPageBlocks, PdfPageStatus } from './types';

export interface PageLines {
  pageNumber: number;
  /** Page size in the units of the lines. */
  width: number;
  height: number;
  /** Size reported in blocks (px): same as width/height for the text layer, raster size for OCR. */
  pxWidth: number | null;
  pxHeight: number | null;
  lines: Line[];
  source: 'text-layer' | 'ocr';
  status: PdfPageStatus;
}

export interface LayoutOptions {
  pageMarkers: boolean;
  pages: boolean;
  blocks: boolean;
}

export interface LayoutResult {
  markdown: string;
  pages?: PdfPage[];
  blocks?: PdfPageBlocks[];
  /** First level-1 heading, a fallback title. */
  firstHeading?: string;
}

type Kind = 'para' | 'list' | 'table' | 'header' | 'footer' | 'pagenum';

interface RawBlock {
  kind: Kind;
  lines: Line[];
  /** Table rows of cells (kind table). */
  rows?: string[][];
  /** List marker as written (kind list). */
  marker?: string;
  size: number;
  source: 'text-layer' | 'ocr';
  // Filled by classification.
  type?: PdfBlockType;
  label?: string;
  markdown?: string;
  text?: string;
}

/** Vertical bands (fraction of page height) where running headers and footers live. */
const HEADER_BAND = 0.09;
const FOOTER_BAND = 0.91;

const BULLET = /^([•◦▪▫‣⁃∙·●○■□➢➤►▶✓✔\-–—*])\s*(\S.*)$/u;
const NUMBERED = /^(\d{1,3})[.)]\s+(\S.*)$/;
const LETTERED = /^(\(?[a-z]\))\s+(\S.*)$/;
const PAGE_NUMBER = /^(?:(?:page|p\.|seite|página|pagina)\s*)?(?:\d{1,4}|[ivxlcdm]{1,7})(?:\s*(?:of|\/|von|de|di)\s*\d{1,4})?$|^[-–—]\s*\d{1,4}\s*[-–—]$/i;
const CAPTION = /^(?:fig(?:ure)?\.?|table|tab\.|chart|exhibit)\s*\d+[a-z]?\s*[.:—–-]/i;
const SENTENCE_END = /[.!?:;]["'”’)\]]?$/;

// ---------------------------------------------------------------------------
// Running headers, footers and page numbers
// ---------------------------------------------------------------------------

function furnitureKey(text: string): string {
  return text.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();
}

/** Segment → 'header' | 'footer' | 'pagenum' for page furniture, decided across the document. */
function findFurniture(pages: PageLines[]): Map<Segment, Kind> {
  const counts = { top: new Map<string, number>(), bottom: new Map<string, number>() };
  const candidates: { seg: Segment; where: 'top' | 'bottom'; key: string; withNumber: boolean }[] = [];
  for (const p of pages) {
    const n = p.lines.length;
    const seen = { top: new Set<string>(), bottom: new Set<string>() };
    p.lines.forEach((l, i) => {
      const where = l.y1 <= p.height * HEADER_BAND && i < 3 ? 'top' : l.y0 >= p.height * FOOTER_BAND && i >= n - 3 ? 'bottom' : null;
      if (!where) return;
      // "Chapter 2: Methods      17": a running title next to the page number.
      const withNumber = l.segs.length > 1 && l.segs.some((s) => PAGE_NUMBER.test(s.text.trim()));
      for (const seg of l.segs) {
        const key = furnitureKey(seg.text);
        candidates.push({ seg, where, key, withNumber });
        if (!seen[where].has(key)) {
          seen[where].add(key);
          counts[where].set(key, (counts[where].get(key) ?? 0) + 1);
        }
      }
    });
  }
  const minRepeat = Math.max(2, Math.ceil(pages.length * 0.3));
  const out = new Map<Segment, Kind>();
  for (const c of candidates) {
    if (PAGE_NUMBER.test(c.seg.text.trim())) out.set(c.seg, 'pagenum');
    else if (c.withNumber || (counts[c.where].get(c.key) ?? 0) >= minRepeat) out.set(c.seg, c.where === 'top' ? 'header' : 'footer');
  }
  return out;
}

// ---------------------------------------------------------------------------
// Reading order: full-width bands and a simple two-column split
// ---------------------------------------------------------------------------

function median(xs: number[]): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** x of a gutter between two text columns, or null. */
function findGutter(segs: Segment[]): number | null {
  if (segs.length < 8) return null;
  let minX = Infinity;
  let maxX = -Infinity;
  for (const s of segs) {
    minX = Math.min(minX, s.x0);
    maxX = Math.max(maxX, s.x1);
  }
  const width = maxX - minX;
  if (width <= 0) return null;
  const step = Math.max(1, width / 150);
  let bestCross = Infinity;
  let bestGs: number[] = [];
  for (let g = minX + 0.3 * width; g <= minX + 0.7 * width; g += step) {
    let cross = 0;
    for (const s of segs) if (s.x0 < g - 1 && s.x1 > g + 1) cross++;
    if (cross < bestCross) {
      bestCross = cross;
      bestGs = [g];
    } else if (cross === bestCross) bestGs.push(g);
  }
  if (!bestGs.length || bestCross > segs.length * 0.25) return null;
  const g = bestGs[Math.floor(bestGs.length / 2)];
  const left = segs.filter((s) => s.x1 <= g + 1);
  const right = segs.filter((s) => s.x0 >= g - 1);
  if (left.length < 4 || right.length < 4) return null;
  // Column text fills its column; table cells do not.
  if (median(left.map((s) => s.x1 - s.x0)) < 0.55 * (g - minX)) return null;
  if (median(right.map((s) => s.x1 - s.x0)) < 0.55 * (maxX - g)) return null;
  // The two columns sit side by side.
  const ly0 = Math.min(...left.map((s) => s.y0));
  const ly1 = Math.max(...left.map((s) => s.y1));
  const ry0 = Math.min(...right.map((s) => s.y0));
  const ry1 = Math.max(...right.map((s) => s.y1));
  const overlap = Math.min(ly1, ry1) - Math.max(ly0, ry0);
  if (overlap < 0.5 * Math.min(ly1 - ly0, ry1 - ry0)) return null;
  return g;
}

/** Regroup segments (in reading order) into lines by their original line index. */
function regroup(segs: Segment[]): Line[] {
  const byLine = new Map<number, Segment[]>();
  for (const s of segs) {
    const arr = byLine.get(s.line);
    if (arr) arr.push(s);
    else byLine.set(s.line, [s]);
  }
  return [...byLine.values()].map((arr) => lineOf(arr.sort((a, b) => a.x0 - b.x0)));
}

/** Content segments of a page → regions (each a list of lines) in reading order. */
function regions(lines: Line[], furniture: Map<Segment, Kind>): Line[][] {
  const segs: Segment[] = [];
  for (const l of lines) for (const s of l.segs) if (!furniture.has(s)) segs.push(s);
  if (!segs.length) return [];
  const g = findGutter(segs);
  if (g === null) return [regroup(segs)];
  const out: Line[][] = [];
  let full: Segment[] = [];
  let left: Segment[] = [];
  let right: Segment[] = [];
  const flushCols = () => {
    if (left.length) out.push(regroup(left));
    if (right.length) out.push(regroup(right));
    left = [];
    right = [];
  };
  const flushFull = () => {
    if (full.length) out.push(regroup(full));
    full = [];
  };
  // Segments are in line order, i.e. top to bottom.
  for (const s of segs) {
    const crosses = s.x0 < g - 1 && s.x1 > g + 1;
    if (crosses) {
      flushCols();
      full.push(s);
    } else {
      flushFull();
      (s.x1 <= g + 1 ? left : right).push(s);
    }
  }
  flushCols();
  flushFull();
  return out;
}

// ---------------------------------------------------------------------------
// Blocks: tables, list items, paragraphs
// ---------------------------------------------------------------------------

function lineText(l: Line): string {
  return l.segs.map((s) => s.text).join(' ');
}

/** Column ranges of a run of multi-segment lines, or null when they do not align into ≥2 columns. */
function tableColumns(run: Line[]): [number, number][] | null {
  const iv = run.flatMap((l) => l.segs.map((s) => [s.x0, s.x1] as [number, number])).sort((a, b) => a[0] - b[0]);
  const size = median(run.map((l) => l.size));
  const cols: [number, number][] = [];
  for (const [a, b] of iv) {
    const last = cols[cols.length - 1];
    if (last && a < last[1] + 0.3 * size) last[1] = Math.max(last[1], b);
    else cols.push([a, b]);
  }
  if (cols.length < 2) return null;
  let chars = 0;
  let cells = 0;
  for (const l of run) for (const s of l.segs) {
    chars += s.text.length;
    cells++;
  }
  if (chars / cells > 80) return null;
  return cols;
}

function tableRows(run: Line[], cols: [number, number][]): string[][] {
  return run.map((l) => {
    const row = cols.map(() => '');
    for (const s of l.segs) {
      const mid = (s.x0 + s.x1) / 2;
      let idx = cols.findIndex(([a, b]) => mid >= a - 1 && mid <= b + 1);
      if (idx < 0) idx = cols.findIndex(([a, b]) => s.x0 < b && s.x1 > a);
      if (idx < 0) idx = 0;
      row[idx] = row[idx] ? `${row[idx]} ${s.text}` : s.text;
    }
    return row;
  });
}

function listMarker(text: string): { marker: string; rest: string } | null {
  let m = BULLET.exec(text);
  if (m) {
    // "-5 °C" or "—said he" are not list items: a dash needs a space after it.
    if (/^[-–—*]$/.test(m[1]) && !/^[-–—*]\s/.test(text)) return null;
    return { marker: '-', rest: m[2] };
  }
  m = NUMBERED.exec(text);
  if (m) return { marker: `${Number(m[1])}.`, rest: m[2] };
  m = LETTERED.exec(text);
  if (m) return { marker: '-', rest: `${m[1]} ${m[2]}` };
  return null;
}

/** Typical baseline-to-baseline distance of consecutive lines of the same size. */
function linePitch(lines: Line[]): (size: number) => number {
  const pitches = new Map<number, number[]>();
  for (let i = 1; i < lines.length; i++) {
    const a = lines[i - 1];
    const b = lines[i];
    if (Math.abs(a.size - b.size) > 0.5) continue;
    const d = b.baseline - a.baseline;
    if (d < 0.8 * b.size || d > 2.5 * b.size) continue;
    const key = Math.round(b.size);
    const arr = pitches.get(key);
    if (arr) arr.push(d);
    else pitches.set(key, [d]);
  }
  return (size) => {
    const arr = pitches.get(Math.round(size));
    return arr && arr.length >= 2 ? median(arr) : 1.25 * size;
  };
}

/** The block being built, and the horizontal extent of its lines so far. */
interface OpenBlock {
  block: RawBlock;
  minX: number;
  maxX: number;
  /** x of the list marker (list items' continuation lines are indented past it). */
  markerX: number;
}

/** What a region looks like as a whole: the usual line pitch per size, its left and right edges. */
interface RegionShape {
  pitch: (size: number) => number;
  right: number;
  width: number;
}

/** A region's lines → tables, list items and paragraphs, in order. */
function regionBlocks(lines: Line[], source: 'text-layer' | 'ocr'): RawBlock[] {
  const out: RawBlock[] = [];
  const shape = regionShape(lines);
  let cur: OpenBlock | null = null;
  let i = 0;
  while (i < lines.length) {
    const table = tableAt(lines, i, source);
    if (table) {
      if (cur) out.push(cur.block);
      cur = null;
      out.push(table);
      i += table.lines.length;
      continue;
    }
    const l = lines[i];
    const marker = listMarker(lineText(l));
    const prev = i > 0 ? lines[i - 1] : null;
    if (!cur || !prev || startsBlock(l, prev, !!marker, cur, shape)) {
      if (cur) out.push(cur.block);
      const block: RawBlock = { kind: marker ? 'list' : 'para', lines: [l], size: l.size, source, marker: marker?.marker };
      cur = { block, minX: l.segs[0].x0, maxX: l.segs[l.segs.length - 1].x1, markerX: l.segs[0].x0 };
    } else {
      cur.block.lines.push(l);
      cur.minX = Math.min(cur.minX, l.segs[0].x0);
      cur.maxX = Math.max(cur.maxX, l.segs[l.segs.length - 1].x1);
    }
    i++;
  }
  if (cur) out.push(cur.block);
  return out;
}

function regionShape(lines: Line[]): RegionShape {
  let right = -Infinity;
  let left = Infinity;
  for (const l of lines) {
    for (const s of l.segs) {
      right = Math.max(right, s.x1);
      left = Math.min(left, s.x0);
    }
  }
  return { pitch: linePitch(lines), right, width: right - left };
}

/** A run of lines with several aligned segments, starting at line `i`, is a table. */
function tableAt(lines: Line[], i: number, source: 'text-layer' | 'ocr'): RawBlock | null {
  if (lines[i].segs.length < 2) return null;
  let j = i;
  while (
    j + 1 < lines.length &&
    lines[j + 1].segs.length >= 2 &&
    lines[j + 1].baseline - lines[j].baseline <= 3 * Math.max(lines[j].size, lines[j + 1].size) &&
    Math.abs(lines[j + 1].size - lines[j].size) <= 0.25 * lines[j].size
  ) j++;
  if (j === i) return null;
  const run = lines.slice(i, j + 1);
  const cols = tableColumns(run);
  if (!cols) return null;
  return { kind: 'table', lines: run, rows: tableRows(run, cols), size: median(run.map((r) => r.size)), source };
}

/**
 * Whether line `l` starts a new block instead of continuing `cur` (whose last line is `prev`):
 * a size change, a vertical gap, no horizontal overlap, or a list marker always split; a list
 * item goes on with lines indented past its marker; a paragraph ends before a first-line indent
 * or after a short line ending a sentence.
 */
function startsBlock(l: Line, prev: Line, hasMarker: boolean, cur: OpenBlock, region: RegionShape): boolean {
  const d = l.baseline - prev.baseline;
  const sizeJump = Math.abs(l.size - prev.size) > Math.max(0.5, 0.08 * prev.size);
  const gap = d > Math.max(region.pitch(l.size) * 1.3, l.size * 1.45) || d < 0.3 * l.size;
  const lx0 = l.segs[0].x0;
  const lx1 = l.segs[l.segs.length - 1].x1;
  const disjoint = lx0 > cur.maxX || lx1 < cur.minX;
  if (sizeJump || gap || disjoint || hasMarker || cur.block.kind === 'table') return true;
  if (cur.block.kind === 'list') return lx0 < cur.markerX + 0.5 * l.size;
  if (cur.block.kind === 'para') {
    const px1 = prev.segs[prev.segs.length - 1].x1;
    const indented = lx0 > cur.minX + 1.0 * l.size && lx0 < cur.minX + 8 * l.size;
    const prevShort = region.width > 0 && px1 < region.right - 0.3 * region.width && SENTENCE_END.test(lineText(prev));
    return indented || prevShort;
  }
  return false;
}

/** Join wrapped lines; "exam-" + "ple" → "example". */
export function joinLines(texts: string[]): string {
  let out = '';
  for (const raw of texts) {
    const t = raw.trim();
    if (!t) continue;
    if (!out) {
      out = t;
      continue;
    }
    const m = /(\p{L})[-\u00ad\u2010]$/u.exec(out);
    if (m && /^\p{Ll}/u.test(t)) out = out.slice(0, -1) + t;
    else if (out.endsWith('\u00ad')) out = out.slice(0, -1) + t;
    else out += ` ${t}`;
  }
  return out.replace(/\u00ad/g, '');
}

// ---------------------------------------------------------------------------
// Markdown rendering
// ---------------------------------------------------------------------------

function escapeParagraph(text: string): string {
  // Text that would turn into markdown syntax at the start of a block.
  return text
    .replace(/^(#{1,6}\s|>|=+\s*$|-{3,}\s*$|\+\s)/, '\\$1')
    .replace(/^(\d{1,9})([.)]\s)/, '$1\\$2');
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|').trim();
}

function renderTable(rows: string[][]): string {
  const width = Math.max(...rows.map((r) => r.length));
  const norm = rows.map((r) => [...r, ...Array(width - r.length).fill('')].map(escapeCell));
  const line = (r: string[]) => `| ${r.join(' | ')} |`;
  return [line(norm[0]), line(norm[0].map(() => '---')), ...norm.slice(1).map(line)].join('\n');
}

function bboxOf(lines: Line[], w: number, h: number): [number, number, number, number] | null {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const l of lines) for (const s of l.segs) {
    x0 = Math.min(x0, s.x0);
    y0 = Math.min(y0, s.y0);
    x1 = Math.max(x1, s.x1);
    y1 = Math.max(y1, s.y1);
  }
  if (!(w > 0 && h > 0) || !Number.isFinite(x0)) return null;
  const n = (v: number, d: number) => Math.round(Math.min(1, Math.max(0, v / d)) * 10000) / 10000;
  return [n(x0, w), n(y0, h), n(x1, w), n(y1, h)];
}

function ocrConfidence(lines: Line[]): number | null {
  let sum = 0;
  let n = 0;
  for (const l of lines) for (const s of l.segs) {
    if (s.conf === null) continue;
    sum += s.conf * s.text.length;
    n += s.text.length;
  }
  return n ? Math.round((sum / n / 100) * 1000) / 1000 : null;
}

/** Body font size: the size carrying the most characters. */
function bodySize(blocks: RawBlock[]): number {
  const chars = new Map<number, number>();
  for (const b of blocks) for (const l of b.lines) for (const s of l.segs) {
    const k = Math.round(s.size * 2) / 2;
    chars.set(k, (chars.get(k) ?? 0) + s.text.length);
  }
  let best = 0;
  let size = 10;
  for (const [k, v] of chars) if (v > best) {
    best = v;
    size = k;
  }
  return size;
}

function headingThreshold(body: number, source: 'text-layer' | 'ocr'): number {
  // OCR sizes come from line heights and are noisy.
  return source === 'ocr' ? Math.max(body * 1.35, body + 2) : Math.max(body * 1.12, body + 1);
}

function isHeadingCandidate(b: RawBlock, body: number): boolean {
  // A numbered "list item" in a heading size is a numbered section heading ("2. Methods").
  if ((b.kind !== 'para' && !(b.kind === 'list' && b.marker !== '-')) || b.lines.length > 3) return false;
  const text = joinLines(b.lines.map(lineText));
  return text.length <= 200 && b.size >= headingThreshold(body, b.source) && /\p{L}/u.test(text);
}

/** The whole pass: pages of lines → markdown, per-page markdown and blocks. */
export function layoutDocument(pages: PageLines[], opts: LayoutOptions): LayoutResult {
  const furniture = findFurniture(pages);
  const perPage = pages.map((p) => pageBlocks(p, furniture));
  const headings = headingLevels(perPage);
  const firstHeading = labelBlocks(perPage, headings);
  const result = assemble(pages, perPage, opts);
  if (firstHeading) result.firstHeading = firstHeading;
  return result;
}

/** One page's blocks in reading order: running header first, content by region, page furniture at the bottom last. */
function pageBlocks(p: PageLines, furniture: Map<Segment, Kind>): RawBlock[] {
  const blocks: RawBlock[] = [];
  const head: RawBlock[] = [];
  const foot: RawBlock[] = [];
  for (const l of p.lines) for (const s of l.segs) {
    const kind = furniture.get(s);
    if (!kind) continue;
    const b: RawBlock = { kind, lines: [lineOf([s])], size: s.size, source: p.source };
    (s.y0 < p.height / 2 ? head : foot).push(b);
  }
  for (const lines of regions(p.lines, furniture)) {
    const rb = regionBlocks(lines, p.source);
    // A paragraph running on from the previous column: merge it.
    const last = blocks[blocks.length - 1];
    const first = rb[0];
    if (
      last && first && last.kind === 'para' && first.kind === 'para' && Math.abs(last.size - first.size) < 0.5 &&
      !SENTENCE_END.test(lineText(last.lines[last.lines.length - 1])) && /^\p{Ll}/u.test(lineText(first.lines[0]))
    ) {
      last.lines.push(...first.lines);
      rb.shift();
    }
    blocks.push(...rb);
  }
  return [...head, ...blocks, ...foot];
}

/** The body size, and heading levels from the distinct sizes of heading-like blocks, largest first. */
interface Headings {
  body: number;
  levelOf(size: number): number;
}

function headingLevels(perPage: RawBlock[][]): Headings {
  const body = bodySize(perPage.flat().filter((b) => b.kind === 'para' || b.kind === 'list'));
  const headingSizes: number[] = [];
  for (const b of perPage.flat()) {
    if (!isHeadingCandidate(b, body)) continue;
    if (!headingSizes.some((s) => Math.abs(s - b.size) < 0.6)) headingSizes.push(b.size);
  }
  headingSizes.sort((a, b) => b - a);
  const levelOf = (size: number) => {
    const idx = headingSizes.findIndex((s) => Math.abs(s - size) < 0.6);
    return Math.min(3, (idx < 0 ? headingSizes.length : idx) + 1);
  };
  return { body, levelOf };
}

/**
 * Gives every block its type, label and markdown (page furniture: its text, no markdown). The
 * first level-1 heading on page 1 is the title. Returns the first level-1 heading (a fallback title).
 */
function labelBlocks(perPage: RawBlock[][], headings: Headings): string | undefined {
  let firstHeading: string | undefined;
  let titleGiven = false;
  for (let pi = 0; pi < perPage.length; pi++) {
    for (const b of perPage[pi]) {
      const texts = b.lines.map(lineText);
      if (b.kind === 'header' || b.kind === 'footer' || b.kind === 'pagenum') {
        b.type = b.kind === 'header' ? 'page_header' : b.kind === 'footer' ? 'page_footer' : 'page_number';
        b.label = b.type;
        b.text = texts.join(' ');
        b.markdown = '';
      } else if (b.kind === 'table' && b.rows) {
        b.type = 'table';
        b.label = 'table';
        b.markdown = renderTable(b.rows);
      } else if (b.kind === 'list' && !isHeadingCandidate(b, headings.body)) {
        const joined = joinLines(texts);
        const m = listMarker(joined);
        b.type = 'text';
        b.label = 'list_item';
        b.markdown = `${b.marker ?? m?.marker ?? '-'} ${m ? m.rest : joined}`;
      } else if (isHeadingCandidate(b, headings.body)) {
        const level = headings.levelOf(b.size);
        const text = joinLines(texts);
        b.type = level === 1 && !titleGiven && pi === 0 ? 'title' : 'section_header';
        if (b.type === 'title') titleGiven = true;
        if (level === 1 && !firstHeading) firstHeading = text;
        b.label = `heading_${level}`;
        b.markdown = `${'#'.repeat(level)} ${text}`;
      } else {
        const text = joinLines(texts);
        b.type = CAPTION.test(text) && text.length < 400 ? 'caption' : 'text';
        b.label = b.type === 'caption' ? 'caption' : 'paragraph';
        b.markdown = escapeParagraph(text);
      }
    }
  }
  return firstHeading;
}

/** The document's markdown (pages joined, with markers on request), pages and blocks with each block's span in it. */
function assemble(pages: PageLines[], perPage: RawBlock[][], opts: LayoutOptions): LayoutResult {
  let md = '';
  const pageOut: PdfPage[] = [];
  const blockOut: PdfPageBlocks[] = [];
  for (let pi = 0; pi < pages.length; pi++) {
    const p = pages[pi];
    const blocks = perPage[pi];
    const { pageMd, offsets } = pageMarkdown(blocks);
    let base = -1;
    if (pageMd) {
      if (md) md += opts.pageMarkers ? `\n\n---\n\n<!-- page ${p.pageNumber} -->\n\n` : '\n\n';
      base = md.length;
      md += pageMd;
    }
    if (opts.pages) pageOut.push({ pageNumber: p.pageNumber, markdown: pageMd });
    if (opts.blocks) blockOut.push({ pageNumber: p.pageNumber, width: p.pxWidth, height: p.pxHeight, status: p.status, items: blockItems(p, blocks, offsets, base) });
  }
  const result: LayoutResult = { markdown: md };
  if (opts.pages) result.pages = pageOut;
  if (opts.blocks) result.blocks = blockOut;
  return result;
}

/** A page's markdown (consecutive list items one line apart) and each block's offset in it. */
function pageMarkdown(blocks: RawBlock[]): { pageMd: string; offsets: Map<RawBlock, number> } {
  let pageMd = '';
  const offsets = new Map<RawBlock, number>();
  let prev: RawBlock | null = null;
  for (const b of blocks.filter((x) => x.markdown)) {
    if (prev) pageMd += prev.label === 'list_item' && b.label === 'list_item' ? '\n' : '\n\n';
    offsets.set(b, pageMd.length);
    pageMd += b.markdown;
    prev = b;
  }
  return { pageMd, offsets };
}

/** The spec's block items of a page; `base` is where the page's markdown starts in the document (-1: not in it). */
function blockItems(p: PageLines, blocks: RawBlock[], offsets: Map<RawBlock, number>, base: number): PdfBlock[] {
  return blocks.map((b, idx) => {
    const off = offsets.get(b);
    const content = b.markdown ? b.markdown : (b.text ?? '');
    return {
      id: `p${p.pageNumber}.b${idx}`,
      type: b.type ?? 'text',
      label: b.label ?? null,
      bbox: bboxOf(b.lines, p.width, p.height),
      content,
      markdownSpan: off !== undefined && base >= 0 ? [base + off, base + off + content.length] : null,
      readingOrder: idx,
      source: b.source,
      confidence: { layout: null, ocr: b.source === 'ocr' ? ocrConfidence(b.lines) : null },
    };
  });
}
