import type { Element } from 'domhandler';
import { isTag } from './dom';

/**
 * GFM tables. turndown-plugin-gfm's `tables` (which the transform used before) only converted
 * tables whose first row is all <th> and emitted every other table as raw HTML, which on older
 * sites means the whole page (layout tables) comes out as HTML. Here:
 *  - a data table becomes a GFM table, its first row serving as the header;
 *  - a layout table (nested tables, block content such as headings or lists in cells, or a
 *    single column) is unwrapped into its cells' blocks.
 */
type Mode = 'data' | 'layout';
const modes = new WeakMap<Element, Mode>();

const BLOCKS_IN_CELLS = new Set(['table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'pre', 'blockquote', 'dl', 'hr', 'form']);
const SECTIONS = new Set(['thead', 'tbody', 'tfoot']);

function closestTable(el: Element): Element | null {
  for (let p = el.parent; p; p = p.parent) if (isTag(p) && p.name === 'table') return p;
  return null;
}

function cellsOf(row: Element): Element[] {
  const out: Element[] = [];
  for (const c of row.children) if (isTag(c) && (c.name === 'td' || c.name === 'th')) out.push(c);
  return out;
}

/** Rows of this table only (not of tables nested in its cells). */
function rowsOf(table: Element): Element[] {
  const rows: Element[] = [];
  for (const c of table.children) {
    if (!isTag(c)) continue;
    if (c.name === 'tr') rows.push(c);
    else if (SECTIONS.has(c.name)) for (const r of c.children) if (isTag(r) && r.name === 'tr') rows.push(r);
  }
  return rows;
}

function colspan(cell: Element): number {
  const n = Number.parseInt(cell.attribs.colspan ?? '1', 10);
  return Number.isFinite(n) && n > 1 ? Math.min(n, 100) : 1;
}

function hasBlockInside(el: Element): boolean {
  for (const c of el.children) {
    if (!isTag(c)) continue;
    if (BLOCKS_IN_CELLS.has(c.name) || hasBlockInside(c)) return true;
  }
  return false;
}

function modeOfTable(table: Element): Mode {
  let mode = modes.get(table);
  if (!mode) {
    const rows = rowsOf(table);
    const maxCols = Math.max(0, ...rows.map((r) => cellsOf(r).reduce((n, c) => n + colspan(c), 0)));
    mode = maxCols <= 1 || hasBlockInside(table) ? 'layout' : 'data';
    modes.set(table, mode);
  }
  return mode;
}

/** The mode of the table this element (a table, section, row or cell) belongs to. */
export function tableModeOf(el: Element): Mode {
  const table = el.name === 'table' ? el : closestTable(el);
  return table ? modeOfTable(table) : 'layout';
}

/** A GFM cell is one line and may not contain an unescaped pipe. */
function cellText(content: string): string {
  return content.trim().replace(/\s*\n+\s*/g, ' ').replace(/\|/g, '\\|');
}

export function tableCell(cell: Element, content: string): string {
  const row = cell.parent && isTag(cell.parent) ? cell.parent : null;
  const first = row ? cellsOf(row)[0] === cell : true;
  return `${first ? '| ' : ' '}${cellText(content)} |${' |'.repeat(colspan(cell) - 1)}`;
}

const ALIGN: Record<string, string> = { left: ':--', right: '--:', center: ':-:' };

const firstRows = new WeakMap<Element, Element | undefined>();

function isFirstRow(row: Element): boolean {
  const table = closestTable(row);
  if (!table) return false;
  if (!firstRows.has(table)) firstRows.set(table, rowsOf(table)[0]);
  return firstRows.get(table) === row;
}

export function tableRowMarkdown(row: Element, content: string): string {
  const cells = cellsOf(row);
  if (!cells.length) return '';
  let separator = '';
  if (isFirstRow(row)) {
    const borders = cells.flatMap((cell) => {
      const align = ALIGN[(cell.attribs.align ?? '').toLowerCase()] ?? '---';
      return Array.from({ length: colspan(cell) }, () => align);
    });
    separator = `\n| ${borders.join(' | ')} |`;
  }
  return `\n${content}${separator}`;
}

export function tableMarkdown(content: string): string {
  // The caption (if any) is the part before the first row: keep it as a paragraph above.
  const start = content.indexOf('\n|');
  const caption = start > 0 ? content.slice(0, start).trim() : '';
  const rows = (start >= 0 ? content.slice(start) : content).split('\n').filter((l) => l.trim());
  if (!rows.length) return caption ? `\n\n${caption}\n\n` : '';
  return `\n\n${caption ? `${caption}\n\n` : ''}${rows.join('\n')}\n\n`;
}
