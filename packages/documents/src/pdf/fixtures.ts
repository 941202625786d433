/**
 * Test and benchmark inputs generated on the fly (pdf-lib is a devDependency):
 * nothing binary is checked in.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { PDFFont, PDFPage } from 'pdf-lib';

const exec = promisify(execFile);

const LOREM =
  'The committee reviewed the results of the second quarter and agreed that the new process reduced waiting times for most customers while keeping costs stable across all regions and product lines';

/** Draw `text` wrapped to `width`, returning the y below it. */
function paragraph(page: PDFPage, font: PDFFont, text: string, x: number, y: number, width: number, size = 11, leading = 14): number {
  let line = '';
  for (const word of text.split(/\s+/)) {
    const next = line ? `${line} ${word}` : word;
    if (font.widthOfTextAtSize(next, size) > width && line) {
      page.drawText(line, { x, y, size, font });
      y -= leading;
      line = word;
    } else line = next;
  }
  if (line) {
    page.drawText(line, { x, y, size, font });
    y -= leading;
  }
  return y;
}

function furniture(page: PDFPage, font: PDFFont, n: number, total: number): void {
  page.drawText('ACME Corporation - Internal Report', { x: 72, y: 752, size: 9, font });
  page.drawText(`Page ${n} of ${total}`, { x: 280, y: 30, size: 9, font });
}

/**
 * Three pages: a 26pt title, paragraphs, a hyphenated line break
 * ("exam-" / "ple"), a bulleted list with separate bullet glyphs, 16pt/13pt
 * headings, a 3×4 table, running header and "Page N of 3" footer.
 */
export async function makeReportPdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.setTitle('Quarterly Report');
  doc.setAuthor('Jane Analyst');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);

  // Page 1
  let p = doc.addPage([612, 792]);
  furniture(p, font, 1, 3);
  p.drawText('Quarterly Report', { x: 72, y: 690, size: 26, font: bold });
  let y = paragraph(p, font, `Introduction text. ${LOREM}.`, 72, 650, 460);
  y -= 10;
  p.drawText('This paragraph shows a word split at the line end, for exam-', { x: 72, y, size: 11, font });
  y -= 14;
  p.drawText('ple a hyphenated word that must be joined again.', { x: 72, y, size: 11, font });
  y -= 34;
  p.drawText('Key Points', { x: 72, y, size: 16, font: bold });
  y -= 26;
  for (const item of ['Revenue grew by twelve percent', 'Costs stayed flat', 'Two new offices opened']) {
    p.drawText('•', { x: 80, y, size: 11, font });
    p.drawText(item, { x: 96, y, size: 11, font });
    y -= 16;
  }

  // Page 2
  p = doc.addPage([612, 792]);
  furniture(p, font, 2, 3);
  p.drawText('Results by Region', { x: 72, y: 700, size: 16, font: bold });
  y = paragraph(p, font, 'The table below lists the figures for each region.', 72, 670, 460);
  y -= 12;
  const rows = [
    ['Region', 'Revenue', 'Growth'],
    ['North', '1,200', '12%'],
    ['South', '950', '8%'],
    ['West', '1,430', '15%'],
  ];
  for (const [i, row] of rows.entries()) {
    row.forEach((cell, c) => p.drawText(cell, { x: 72 + c * 150, y, size: 11, font: i === 0 ? bold : font }));
    y -= 18;
  }
  y -= 20;
  paragraph(p, font, `Closing remarks for the results section. ${LOREM}.`, 72, y, 460);

  // Page 3
  p = doc.addPage([612, 792]);
  furniture(p, font, 3, 3);
  p.drawText('Details', { x: 72, y: 700, size: 13, font: bold });
  paragraph(p, font, `Final page with more details. ${LOREM}.`, 72, 676, 460);

  return Buffer.from(await doc.save());
}

/** `pages` pages of wrapped paragraphs with a heading each (benchmark / maxPages input). */
export async function makeLongPdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.TimesRoman);
  const bold = await doc.embedFont(StandardFonts.TimesRomanBold);
  for (let n = 1; n <= pages; n++) {
    const p = doc.addPage([612, 792]);
    p.drawText(`Chapter ${n}`, { x: 72, y: 710, size: 18, font: bold });
    let y = 680;
    for (let k = 0; k < 6 && y > 140; k++) {
      y = paragraph(p, font, `Paragraph ${k + 1} of page ${n}. ${LOREM}. ${LOREM}.`, 72, y, 468, 11, 13.5);
      y -= 9;
    }
    p.drawText(String(n), { x: 300, y: 36, size: 10, font });
  }
  return Buffer.from(await doc.save());
}

/** A one-page text PDF rendered to PNG by pdftoppm (at `dpi`). */
export async function renderTextPng(lines: string[], dpi = 150): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const p = doc.addPage([612, 396]);
  lines.forEach((text, i) => p.drawText(text, { x: 54, y: 330 - i * 40, size: i === 0 ? 28 : 20, font }));
  const dir = await mkdtemp(join(tmpdir(), 'wds-fixture-'));
  try {
    await writeFile(join(dir, 'in.pdf'), await doc.save());
    await exec('pdftoppm', ['-r', String(dpi), '-singlefile', '-png', join(dir, 'in.pdf'), join(dir, 'out')]);
    return await readFile(join(dir, 'out.png'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A PDF whose single page is only an image of text (no text layer). */
export async function makeScannedPdf(lines: string[]): Promise<Buffer> {
  const png = await renderTextPng(lines);
  const doc = await PDFDocument.create();
  const img = await doc.embedPng(png);
  const p = doc.addPage([612, 396]);
  p.drawImage(img, { x: 0, y: 0, width: 612, height: 396 });
  return Buffer.from(await doc.save());
}

/** qpdf-encrypted copy (user password "user"). Null when qpdf is not installed. */
export async function encryptPdf(pdf: Buffer): Promise<Buffer | null> {
  const dir = await mkdtemp(join(tmpdir(), 'wds-fixture-'));
  try {
    await writeFile(join(dir, 'in.pdf'), pdf);
    await exec('qpdf', ['--encrypt', 'user', 'owner', '256', '--', join(dir, 'in.pdf'), join(dir, 'out.pdf')]);
    return await readFile(join(dir, 'out.pdf'));
  } catch {
    return null;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
