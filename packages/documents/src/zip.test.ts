import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { WdsError } from '@wds/errors';
import { bombDeflate, makeDocx, makeDocxBomb, zip } from './docs/fixtures';
import { parseDocument } from './docs/index';
import type { PdfParseOptions } from './pdf/types';
import { boundedZip, zipArchive, ZipRefused } from './zip';

const pdf: PdfParseOptions = { mode: 'auto', pages: false, blocks: false, pageMarkers: false, timeoutMs: 60_000 };
const LIMITS = { maxInflatedBytes: 1 << 20, maxEntries: 100 };
const all = () => true;
const peakRssMb = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

function refused(f: () => unknown, reason: ZipRefused['reason']): ZipRefused {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ZipRefused, String(e));
    assert.equal(e.reason, reason, e.message);
    return e;
  }
  assert.fail(`expected a ${reason} refusal`);
}

describe('boundedZip', () => {
  test('the bomb fixture is real: 1 KB of deflate per MiB of output', () => {
    const d = bombDeflate(8);
    assert.ok(d.length < 10_000, `${d.length} bytes`);
    assert.equal(inflateRawSync(d).length, 8 << 20);
  });

  test('rebuilds an archive as stored entries with the same content; unread entries are emptied', () => {
    const out = boundedZip(zip({ 'a.xml': '<a>one</a>', 'media/big.png': Buffer.alloc(200_000, 7) }), (n) => n.endsWith('.xml'), LIMITS);
    const again = boundedZip(out, all, LIMITS); // the rebuilt archive reads back through the same reader
    assert.ok(again.includes(Buffer.from('<a>one</a>')));
    assert.ok(out.length < 1_000, 'the image is not carried');
  });

  test('declared sizes do not matter: a bomb declaring 4 KB, or 4 GiB, stops at the budget', () => {
    const lying = zipArchive([{ name: 'x.xml', method: 8, packed: bombDeflate(64), crc: 0, size: 4096 }]);
    const before = peakRssMb();
    assert.match(refused(() => boundedZip(lying, all, LIMITS), 'too-large').message, /more than 1 MB/);
    assert.ok(peakRssMb() - before < 32, 'inflating stopped at the budget'); // 64 MiB of output was never produced
    const huge = zipArchive([{ name: 'x.xml', method: 8, packed: bombDeflate(2), crc: 0, size: 0xfffffffe }]);
    refused(() => boundedZip(huge, all, LIMITS), 'too-large');
    const zip64 = zipArchive([{ name: 'x.xml', method: 8, packed: bombDeflate(2), crc: 0, size: 0xffffffff }]);
    refused(() => boundedZip(zip64, all, LIMITS), 'unsupported');
  });

  test('the budget is for the whole file: many entries under it each, over it together', () => {
    const parts = Array.from({ length: 5 }, (_, i) => ({ name: `p${i}.xml`, method: 8 as const, packed: deflateRawSync(Buffer.alloc(300_000, 0x20)), crc: 0, size: 300_000 }));
    refused(() => boundedZip(zipArchive(parts), all, LIMITS), 'too-large');
    const stored = Buffer.alloc(2 << 20, 0x20);
    refused(() => boundedZip(zipArchive([{ name: 's.xml', method: 0, packed: stored, crc: crc32(stored) >>> 0, size: 10 }]), all, LIMITS), 'too-large');
  });

  test('ambiguous or unsupported archives are refused: duplicate names, other compression methods, no directory', () => {
    const twice = zipArchive([
      { name: 'word/document.xml', method: 0, packed: Buffer.from('a'), crc: 0, size: 1 },
      { name: 'word/document.xml', method: 0, packed: Buffer.from('b'), crc: 0, size: 1 },
    ]);
    refused(() => boundedZip(twice, all, LIMITS), 'corrupt');
    const bzip = zipArchive([{ name: 'a.xml', method: 12 as 8, packed: Buffer.from('x'), crc: 0, size: 1 }]);
    refused(() => boundedZip(bzip, all, LIMITS), 'unsupported');
    refused(() => boundedZip(Buffer.from('PK\x03\x04 not a zip'), all, LIMITS), 'corrupt');
  });
});

describe('DOCX through boundedZip', () => {
  test('a 1 GiB zip bomb (about 1 MB uploaded) is a 422 DOCX_TOO_COMPLEX, and this process does not grow by a GB', async () => {
    const bomb = makeDocxBomb(1024);
    assert.ok(bomb.length < 1.2e6, `${bomb.length} bytes`);
    const before = peakRssMb();
    const e = await parseDocument(bomb, { filename: 'report.docx', pdf }).then(
      () => assert.fail('converted'),
      (x: unknown) => x,
    );
    assert.ok(e instanceof WdsError, String(e));
    assert.deepEqual([e.status, e.code], [422, 'DOCX_TOO_COMPLEX']);
    assert.match(e.message, /inflates to more than 64 MB/);
    // Before: JSZip inflated the whole GiB into an ArrayBuffer beside the thread's heap cap.
    assert.ok(peakRssMb() - before < 400, `peak RSS grew by ${Math.round(peakRssMb() - before)} MB`);
  });

  test('a DOCX with a large image still converts (the image is never inflated)', async () => {
    // The image alone is over the DOCX budget (64 MiB): only the parts mammoth reads count.
    const real = makeDocx([{ heading: 1, text: 'Report' }, { text: 'Body text.' }]);
    const withImage = zipArchive([
      ...['[Content_Types].xml', '_rels/.rels', 'word/_rels/document.xml.rels', 'word/styles.xml', 'word/document.xml'].map((name) => {
        const data = entryOf(real, name);
        return { name, method: 8 as const, packed: deflateRawSync(data), crc: crc32(data) >>> 0, size: data.length };
      }),
      { name: 'word/media/photo.png', method: 8, packed: deflateRawSync(Buffer.alloc(80 << 20, 1)), crc: 0, size: 80 << 20 },
    ]);
    const r = await parseDocument(withImage, { filename: 'report.docx', pdf });
    assert.equal(r.markdown, '# Report\n\nBody text.');
  });
});

/** One entry's content, read back through boundedZip's stored archive. */
function entryOf(archive: Buffer, name: string): Buffer {
  const stored = boundedZip(archive, (n) => n === name, { maxInflatedBytes: 64 << 20, maxEntries: 100 });
  const i = stored.indexOf(Buffer.from(name));
  const size = stored.readUInt32LE(i - 30 + 18);
  return stored.subarray(i + name.length, i + name.length + size);
}
