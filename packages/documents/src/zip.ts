/**
 * ZIP containers (DOCX now; XLSX, PPTX, ODF, EPUB if they come) are read through `boundedZip`
 * before any parser sees them. A zip bomb is a few KB of deflate that inflates to gigabytes, and a
 * parser's inflater (JSZip in mammoth) writes them into ArrayBuffers, which no thread heap cap
 * bounds. Declared sizes prove nothing (a local header may say 4 GiB or 10 bytes): here every
 * entry is inflated with a hard output limit, counted against one budget for the whole file, and
 * the parser gets a new archive of stored (uncompressed) entries holding exactly those bytes, so
 * it inflates nothing and reads nothing this reader did not check (no parser differential about
 * offsets, duplicate names or data descriptors). Entries the converter never reads (images,
 * fonts) are kept as empty entries and cost nothing.
 */
import { crc32, inflateRawSync } from 'node:zlib';

export interface ZipLimits {
  /** Inflated bytes of all kept entries together. */
  maxInflatedBytes: number;
  /** Entries in the central directory. */
  maxEntries: number;
}

export class ZipRefused extends Error {
  constructor(
    readonly reason: 'too-large' | 'corrupt' | 'unsupported',
    message: string,
  ) {
    super(message);
    this.name = 'ZipRefused';
  }
}

interface Entry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  declaredSize: number;
  localOffset: number;
}

const corrupt = (m: string) => new ZipRefused('corrupt', m);

/**
 * `bytes` as a stored-only ZIP with the same entry names: the entries `keep` accepts hold their
 * inflated content (at most `limits.maxInflatedBytes` together), the others are empty.
 */
export function boundedZip(bytes: Uint8Array, keep: (name: string) => boolean, limits: ZipLimits): Buffer {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const entries = centralDirectory(buf, limits.maxEntries);
  let budget = limits.maxInflatedBytes;
  const out: { name: string; data: Buffer }[] = [];
  for (const e of entries) {
    if (!keep(e.name)) {
      out.push({ name: e.name, data: Buffer.alloc(0) });
      continue;
    }
    const data = inflateEntry(buf, e, budget, limits.maxInflatedBytes);
    budget -= data.length;
    out.push({ name: e.name, data });
  }
  return storedZip(out);
}

function centralDirectory(buf: Buffer, maxEntries: number): Entry[] {
  const eocd = findEocd(buf);
  if (eocd < 0) throw corrupt('no end of central directory');
  const count = buf.readUInt16LE(eocd + 10);
  const size = buf.readUInt32LE(eocd + 12);
  const start = buf.readUInt32LE(eocd + 16);
  if (count === 0xffff || size === 0xffffffff || start === 0xffffffff) throw new ZipRefused('unsupported', 'ZIP64 archives are not supported');
  if (count > maxEntries) throw new ZipRefused('too-large', `the archive has ${count} entries, more than ${maxEntries}`);
  if (start + size > eocd) throw corrupt('the central directory lies outside the file');
  const entries: Entry[] = [];
  const names = new Set<string>();
  let p = start;
  for (let n = 0; n < count; n++) {
    if (p + 46 > eocd || buf.readUInt32LE(p) !== 0x02014b50) throw corrupt('a central directory entry is malformed');
    const nameLen = buf.readUInt16LE(p + 28);
    const e: Entry = {
      flags: buf.readUInt16LE(p + 8),
      method: buf.readUInt16LE(p + 10),
      compressedSize: buf.readUInt32LE(p + 20),
      declaredSize: buf.readUInt32LE(p + 24),
      localOffset: buf.readUInt32LE(p + 42),
      name: buf.toString('utf8', p + 46, p + 46 + nameLen),
    };
    if (e.compressedSize === 0xffffffff || e.declaredSize === 0xffffffff || e.localOffset === 0xffffffff) throw new ZipRefused('unsupported', 'ZIP64 entries are not supported');
    if (e.flags & 0x1) throw new ZipRefused('unsupported', 'encrypted entries are not supported');
    // Two entries of one name: which one a parser reads is its own choice, so neither is trusted.
    if (names.has(e.name)) throw corrupt(`the entry ${e.name} appears twice`);
    names.add(e.name);
    entries.push(e);
    p += 46 + nameLen + buf.readUInt16LE(p + 30) + buf.readUInt16LE(p + 32);
  }
  return entries;
}

function findEocd(buf: Buffer): number {
  const from = Math.max(0, buf.length - 65_557);
  for (let i = buf.length - 22; i >= from; i--) if (buf.readUInt32LE(i) === 0x06054b50) return i;
  return -1;
}

function inflateEntry(buf: Buffer, e: Entry, budget: number, total: number): Buffer {
  const p = e.localOffset;
  if (p + 30 > buf.length || buf.readUInt32LE(p) !== 0x04034b50) throw corrupt(`the entry ${e.name} has no local header`);
  const start = p + 30 + buf.readUInt16LE(p + 26) + buf.readUInt16LE(p + 28);
  const end = start + e.compressedSize;
  if (end > buf.length) throw corrupt(`the entry ${e.name} runs past the end of the file`);
  const tooLarge = () => new ZipRefused('too-large', `its content inflates to more than ${Math.round(total / 2 ** 20)} MB`);
  // The declared size may lie either way: it only refuses early; the inflater's limit is what holds.
  if (e.declaredSize > budget) throw tooLarge();
  const packed = buf.subarray(start, end);
  if (e.method === 0) {
    if (packed.length > budget) throw tooLarge();
    return Buffer.from(packed);
  }
  if (e.method !== 8) throw new ZipRefused('unsupported', `the entry ${e.name} uses compression method ${e.method}`);
  try {
    return inflateRawSync(packed, { maxOutputLength: Math.max(1, budget) });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
    throw corrupt(`the entry ${e.name} does not inflate (${(err as Error).message})`);
  }
}

/** One entry as written: `packed` is its data as stored (method 0) or deflated (8); `size` is what the headers declare. */
export interface RawZipEntry {
  name: string;
  method: 0 | 8;
  packed: Buffer;
  crc: number;
  size: number;
}

/** A ZIP of stored entries (method 0) holding `data`. */
export function storedZip(entries: { name: string; data: Buffer }[]): Buffer {
  return zipArchive(entries.map(({ name, data }) => ({ name, method: 0, packed: data, crc: crc32(data) >>> 0, size: data.length })));
}

/** A ZIP archive of `entries` (UTF-8 names, no extra fields, no ZIP64). */
export function zipArchive(entries: RawZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const nameBuf = Buffer.from(e.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(e.method, 8);
    local.writeUInt32LE(e.crc, 14);
    local.writeUInt32LE(e.packed.length, 18);
    local.writeUInt32LE(e.size, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(0x0800, 8);
    c.writeUInt16LE(e.method, 10);
    c.writeUInt32LE(e.crc, 16);
    c.writeUInt32LE(e.packed.length, 20);
    c.writeUInt32LE(e.size, 24);
    c.writeUInt16LE(nameBuf.length, 28);
    c.writeUInt32LE(offset, 42);
    parts.push(local, nameBuf, e.packed);
    central.push(c, nameBuf);
    offset += 30 + nameBuf.length + e.packed.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, end]);
}
