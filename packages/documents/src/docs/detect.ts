/**
 * What kind of document an upload is: magic bytes first (clients send wrong
 * Content-Types all the time), then the declared Content-Type, then the file
 * name's extension, then a look at the bytes (HTML markup, decodable text).
 */
import { isPdf } from '../pdf/parse';

export type DocumentKind = 'pdf' | 'docx' | 'html' | 'text' | 'image';

export interface Detected {
  kind: DocumentKind | 'unsupported';
  /** MIME type reported in metadata.contentType. */
  contentType: string;
  /** Extension tesseract should see for an image (png, jpg, webp, tif, gif, bmp). */
  imageExt?: string;
  /** Set when the declared type says one thing and the bytes say another. */
  mismatch?: 'pdf' | 'docx' | 'image';
  /** Why it is unsupported (for the error message). */
  reason?: string;
}

export const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const IMAGE_MIME: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
  tif: 'image/tiff',
  gif: 'image/gif',
  bmp: 'image/bmp',
};

const TEXT_TYPES: Record<string, string> = {
  'text/plain': 'text/plain',
  'text/markdown': 'text/markdown',
  'text/x-markdown': 'text/markdown',
  'text/csv': 'text/csv',
  'text/tab-separated-values': 'text/tab-separated-values',
  'application/json': 'application/json',
  'application/ld+json': 'application/json',
  'application/x-ndjson': 'application/x-ndjson',
  'application/xml': 'application/xml',
  'text/xml': 'application/xml',
  'application/yaml': 'application/yaml',
  'text/yaml': 'application/yaml',
};

const TEXT_EXT: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  mdx: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  jsonl: 'application/x-ndjson',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
};

export interface ParseFormatEntry {
  /** Short name (an extension without the dot). */
  format: string;
  kind: 'document' | 'image';
  extensions: string[];
  mimeTypes: string[];
}

/** Extensions each image signature is sent under (the detector reads the bytes, these name the file). */
const IMAGE_EXTENSIONS: Record<string, string[]> = { png: ['.png'], jpg: ['.jpg', '.jpeg'], webp: ['.webp'], tif: ['.tif', '.tiff'], gif: ['.gif'], bmp: ['.bmp'] };

/**
 * What GET /v2/parse/formats lists (Firecrawl's shape), built from the tables detectDocument reads,
 * so the list cannot drift from what an upload is accepted as.
 */
export function parseFormats(): ParseFormatEntry[] {
  const text = new Map<string, ParseFormatEntry>();
  for (const [ext, mime] of Object.entries(TEXT_EXT)) {
    const e = text.get(mime) ?? { format: ext, kind: 'document' as const, extensions: [], mimeTypes: Object.keys(TEXT_TYPES).filter((m) => TEXT_TYPES[m] === mime) };
    e.extensions.push(`.${ext}`);
    if (!e.mimeTypes.includes(mime)) e.mimeTypes.unshift(mime);
    text.set(mime, e);
  }
  return [
    { format: 'pdf', kind: 'document', extensions: ['.pdf'], mimeTypes: ['application/pdf'] },
    { format: 'docx', kind: 'document', extensions: ['.docx'], mimeTypes: [DOCX_MIME] },
    { format: 'html', kind: 'document', extensions: ['.html', '.htm', '.xhtml'], mimeTypes: ['text/html', 'application/xhtml+xml'] },
    ...text.values(),
    ...Object.entries(IMAGE_MIME).map(([format, mime]) => ({ format, kind: 'image' as const, extensions: IMAGE_EXTENSIONS[format], mimeTypes: [mime] })),
  ];
}

function startsWith(b: Uint8Array, sig: number[], at = 0): boolean {
  if (b.length < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[at + i] !== sig[i]) return false;
  return true;
}

function ascii(b: Uint8Array, from: number, to: number): string {
  return Buffer.from(b.subarray(from, Math.min(to, b.length))).toString('latin1');
}

function imageExt(b: Uint8Array): string | null {
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'jpg';
  if (ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') return 'webp';
  if (startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a])) return 'tif';
  if (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a') return 'gif';
  if (ascii(b, 0, 2) === 'BM' && b.length > 26) return 'bmp';
  return null;
}

/** Names of the entries of a ZIP, read from its central directory (no decompression). */
export function zipEntryNames(b: Uint8Array, limit = 2000): string[] | null {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  // End of central directory: last 22..65557 bytes.
  const from = Math.max(0, buf.length - 65557);
  let eocd = -1;
  for (let i = buf.length - 22; i >= from; i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return null;
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const names: string[] = [];
  for (let n = 0; n < count && n < limit; n++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== 0x02014b50) return names.length ? names : null;
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    names.push(buf.toString('utf8', p + 46, p + 46 + nameLen));
    p += 46 + nameLen + extraLen + commentLen;
  }
  return names;
}

function looksLikeHtml(b: Uint8Array): boolean {
  let head = ascii(b, 0, 1024).replace(/^\ufeff|^\xef\xbb\xbf/, '').trimStart().toLowerCase();
  while (head.startsWith('<!--')) {
    const end = head.indexOf('-->');
    if (end < 0) break;
    head = head.slice(end + 3).trimStart();
  }
  if (head.startsWith('<?xml')) head = head.slice(head.indexOf('?>') + 2).trimStart();
  return /^<(!doctype html|html[\s>]|head[\s>]|body[\s>])/.test(head);
}

/** Bytes that cannot be text in any charset: NULs or many C0 control bytes (UTF-16 with a BOM excepted). */
export function looksBinary(b: Uint8Array): boolean {
  if (startsWith(b, [0xff, 0xfe]) || startsWith(b, [0xfe, 0xff])) return false;
  const n = Math.min(b.length, 64 * 1024);
  let control = 0;
  for (let i = 0; i < n; i++) {
    const c = b[i];
    if (c === 0) return true;
    // TAB, LF, FF, CR and ESC (ISO-2022 escapes) occur in text.
    if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0c && c !== 0x0d && c !== 0x1b) control++;
  }
  return control > n * 0.01;
}

/** Valid UTF-8 (or a BOM'd UTF-16): text even without a declared type. */
export function isUtf8Text(b: Uint8Array): boolean {
  if (startsWith(b, [0xff, 0xfe]) || startsWith(b, [0xfe, 0xff])) return true;
  if (looksBinary(b)) return false;
  const sample = b.subarray(0, 64 * 1024);
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: sample.length < b.length });
    return true;
  } catch {
    return false;
  }
}

function extension(filename: string | undefined): string {
  const m = /\.([A-Za-z0-9]{1,10})$/.exec(filename ?? '');
  return m ? m[1].toLowerCase() : '';
}

export function detectDocument(bytes: Uint8Array, filename?: string, contentType?: string): Detected {
  const mime = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const ext = extension(filename);

  // 1. Magic bytes.
  if (isPdf(bytes)) return { kind: 'pdf', contentType: 'application/pdf' };
  const img = imageExt(bytes);
  if (img) return { kind: 'image', contentType: IMAGE_MIME[img], imageExt: img };
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) {
    const names = zipEntryNames(bytes) ?? [];
    if (names.includes('word/document.xml')) return { kind: 'docx', contentType: DOCX_MIME };
    const what = names.some((n) => n.startsWith('xl/'))
      ? 'Excel spreadsheets (XLSX)'
      : names.some((n) => n.startsWith('ppt/'))
        ? 'PowerPoint presentations (PPTX)'
        : names.includes('content.xml')
          ? 'OpenDocument files'
          : 'ZIP archives';
    return { kind: 'unsupported', contentType: mime || 'application/zip', reason: `${what} are not supported` };
  }
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) {
    return { kind: 'unsupported', contentType: mime || 'application/x-ole-storage', reason: 'Legacy Office files (.doc, .xls, .ppt) are not supported; convert to DOCX or PDF' };
  }
  if (ascii(bytes, 0, 5) === '{\\rtf') {
    return { kind: 'unsupported', contentType: 'application/rtf', reason: 'RTF files are not supported' };
  }

  // 2. Declared type / extension that the bytes contradict.
  if (mime === 'application/pdf' || ext === 'pdf') return { kind: 'unsupported', contentType: 'application/pdf', mismatch: 'pdf' };
  if (mime === DOCX_MIME || ext === 'docx') return { kind: 'unsupported', contentType: DOCX_MIME, mismatch: 'docx' };
  if (mime.startsWith('image/')) return { kind: 'unsupported', contentType: mime, mismatch: 'image', reason: `${mime} content is not a readable image` };

  // 3. Declared markup / text types (any charset; the bytes must not be binary).
  const binary = looksBinary(bytes);
  const htmlExt = ext === 'html' || ext === 'htm' || ext === 'xhtml';
  if (!binary) {
    if (mime === 'text/html' || mime === 'application/xhtml+xml') return { kind: 'html', contentType: 'text/html' };
    if (TEXT_TYPES[mime]) return { kind: 'text', contentType: TEXT_TYPES[mime] };
    if (!mime || mime === 'application/octet-stream' || mime.startsWith('text/')) {
      if (htmlExt || looksLikeHtml(bytes)) return { kind: 'html', contentType: 'text/html' };
      if (TEXT_EXT[ext]) return { kind: 'text', contentType: TEXT_EXT[ext] };
      // 4. Undeclared: text only when it decodes as UTF-8.
      if (mime.startsWith('text/')) return { kind: 'text', contentType: mime };
      if (isUtf8Text(bytes)) return { kind: 'text', contentType: 'text/plain' };
    }
  }
  return {
    kind: 'unsupported',
    contentType: mime || 'application/octet-stream',
    reason:
      mime && mime !== 'application/octet-stream'
        ? binary && (mime.startsWith('text/') || TEXT_TYPES[mime])
          ? `The content is binary, not ${mime}`
          : `Content-Type ${mime} is not supported`
        : 'The file type is not recognized',
  };
}
