/** Test inputs for parseDocument, generated on the fly. */
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { zipArchive, type RawZipEntry } from '../zip';

function deflated(name: string, content: string | Buffer): RawZipEntry {
  const data = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
  return { name, method: 8, packed: deflateRawSync(data), crc: crc32(data) >>> 0, size: data.length };
}

/** A ZIP of deflated entries, enough for a DOCX. */
export function zip(entries: Record<string, string | Buffer>): Buffer {
  return zipArchive(Object.entries(entries).map(([name, content]) => deflated(name, content)));
}

/**
 * Deflate data that inflates to `mib` MiB of spaces from about 1 KB per MiB: one MiB deflated
 * with a full flush (which makes it independent of what precedes it), repeated, then an empty
 * final block. Built in milliseconds, nothing committed.
 */
export function bombDeflate(mib: number): Buffer {
  const chunk = deflateRawSync(Buffer.alloc(1 << 20, 0x20), { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  return Buffer.concat([...Array<Buffer>(mib).fill(chunk), Buffer.from([0x03, 0x00])]);
}

/**
 * A DOCX zip bomb: a real DOCX whose word/document.xml inflates to `mib` MiB while its headers
 * declare `declaredSize` bytes (default: a harmless 4 KB; declared sizes are the attacker's to choose).
 */
export function makeDocxBomb(mib: number, declaredSize = 4096): Buffer {
  const { 'word/document.xml': _real, ...rest } = docxEntries([{ text: 'cover' }]);
  return zipArchive([
    ...Object.entries(rest).map(([name, text]) => deflated(name, text)),
    { name: 'word/document.xml', method: 8, packed: bombDeflate(mib), crc: 0, size: declaredSize },
  ]);
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export type DocxPart = { heading: 1 | 2; text: string } | { text: string; bold?: string } | { table: string[][] };

/** A DOCX with headings (Heading1/Heading2 styles), paragraphs and a table. */
export function makeDocx(parts: DocxPart[]): Buffer {
  return zip(docxEntries(parts));
}

/** The entries of makeDocx's DOCX, by name. */
function docxEntries(parts: DocxPart[]): Record<string, string> {
  const body = parts
    .map((p) => {
      if ('table' in p) {
        const rows = p.table
          .map((r) => `<w:tr>${r.map((c) => `<w:tc><w:p><w:r><w:t>${esc(c)}</w:t></w:r></w:p></w:tc>`).join('')}</w:tr>`)
          .join('');
        return `<w:tbl>${rows}</w:tbl>`;
      }
      if ('heading' in p) {
        return `<w:p><w:pPr><w:pStyle w:val="Heading${p.heading}"/></w:pPr><w:r><w:t>${esc(p.text)}</w:t></w:r></w:p>`;
      }
      const bold = p.bold ? `<w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">${esc(p.bold)} </w:t></w:r>` : '';
      return `<w:p>${bold}<w:r><w:t xml:space="preserve">${esc(p.text)}</w:t></w:r></w:p>`;
    })
    .join('');
  return {
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>',
    '_rels/.rels':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    'word/_rels/document.xml.rels':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>',
    'word/styles.xml':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style><w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style></w:styles>',
    'word/document.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
  };
}
