import type TurndownService from 'turndown';

/**
 * GFM table rules. turndown-plugin-gfm's `tables` only converts tables whose
 * first row is all <th> and emits every other table as raw HTML, which on
 * older sites means the whole page (layout tables) comes out as HTML. Here:
 *  - a data table becomes a GFM table, its first row serving as the header
 *    (same output as the plugin for tables that have a <th> header row);
 *  - a layout table (nested tables, block content such as headings or lists
 *    in cells, or a single column) is unwrapped into its cells' blocks.
 */

interface TableNode {
  nodeName: string;
  parentNode: TableNode | null;
  children: ArrayLike<TableNode>;
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): TableNode | null;
  querySelectorAll(selector: string): ArrayLike<TableNode>;
}

type Mode = 'data' | 'layout';
const modes = new WeakMap<TableNode, Mode>();

const BLOCKS_IN_CELLS = 'table, h1, h2, h3, h4, h5, h6, ul, ol, pre, blockquote, dl, hr, form';

function closestTable(node: TableNode): TableNode | null {
  for (let p = node.parentNode; p; p = p.parentNode) if (p.nodeName === 'TABLE') return p;
  return null;
}

function cellsOf(row: TableNode): TableNode[] {
  return Array.from(row.children).filter((c) => c.nodeName === 'TD' || c.nodeName === 'TH');
}

/** Rows of this table only (not of tables nested in its cells). */
function rowsOf(table: TableNode): TableNode[] {
  return Array.from(table.querySelectorAll('tr')).filter((tr) => closestTable(tr) === table);
}

function colspan(cell: TableNode): number {
  const n = Number.parseInt(cell.getAttribute('colspan') ?? '1', 10);
  return Number.isFinite(n) && n > 1 ? Math.min(n, 100) : 1;
}

function modeOf(table: TableNode): Mode {
  let mode = modes.get(table);
  if (!mode) {
    const rows = rowsOf(table);
    const maxCols = Math.max(0, ...rows.map((r) => cellsOf(r).reduce((n, c) => n + colspan(c), 0)));
    mode = maxCols <= 1 || table.querySelector(BLOCKS_IN_CELLS) ? 'layout' : 'data';
    modes.set(table, mode);
  }
  return mode;
}

function modeFor(node: TableNode): Mode {
  const table = node.nodeName === 'TABLE' ? node : closestTable(node);
  return table ? modeOf(table) : 'layout';
}

function isFirstRow(tr: TableNode): boolean {
  const table = closestTable(tr);
  return !!table && rowsOf(table)[0] === tr;
}

/** A GFM cell is one line and may not contain an unescaped pipe. */
function cellText(content: string): string {
  return content.trim().replace(/\s*\n+\s*/g, ' ').replace(/\|/g, '\\|');
}

const asNode = (el: unknown) => el as TableNode;

export const tableRules: Record<string, TurndownService.Rule> = {
  tableCell: {
    filter: ['th', 'td'],
    replacement: (content, el) => {
      const node = asNode(el);
      if (modeFor(node) === 'layout') return `\n\n${content}\n\n`;
      const first = node.parentNode ? cellsOf(node.parentNode)[0] === node : true;
      return `${first ? '| ' : ' '}${cellText(content)} |${' |'.repeat(colspan(node) - 1)}`;
    },
  },
  tableRow: {
    filter: 'tr',
    replacement: (content, el) => {
      const node = asNode(el);
      if (modeFor(node) === 'layout') return `\n\n${content}\n\n`;
      if (!cellsOf(node).length) return '';
      let separator = '';
      if (isFirstRow(node)) {
        const alignMap: Record<string, string> = { left: ':--', right: '--:', center: ':-:' };
        const borders = cellsOf(node).flatMap((cell) => {
          const align = alignMap[(cell.getAttribute('align') ?? '').toLowerCase()] ?? '---';
          return Array.from({ length: colspan(cell) }, () => align);
        });
        separator = `\n| ${borders.join(' | ')} |`;
      }
      return `\n${content}${separator}`;
    },
  },
  tableSection: {
    filter: ['thead', 'tbody', 'tfoot'],
    replacement: (content) => content,
  },
  tableCaption: {
    filter: 'caption',
    replacement: (content) => `\n\n${content.trim()}\n\n`,
  },
  table: {
    filter: 'table',
    replacement: (content, el) => {
      const node = asNode(el);
      if (modeFor(node) === 'layout') return `\n\n${content}\n\n`;
      // The caption (if any) is the part before the first row: keep it as a paragraph above.
      const start = content.indexOf('\n|');
      const caption = start > 0 ? content.slice(0, start).trim() : '';
      const rows = (start >= 0 ? content.slice(start) : content).split('\n').filter((l) => l.trim());
      if (!rows.length) return caption ? `\n\n${caption}\n\n` : '';
      return `\n\n${caption ? `${caption}\n\n` : ''}${rows.join('\n')}\n\n`;
    },
  },
};
