/**
 * DOCX → HTML with mammoth, in a worker thread: a DOCX is a ZIP, and a
 * hostile one (a zip bomb, a huge document.xml) must be killable and must not
 * exhaust the main heap. The ZIP is first rebuilt by `boundedZip` (inflated
 * bytes counted against DOCX_LIMITS), so mammoth's JSZip inflates nothing: the
 * heap cap bounds the XML's DOM, the budget bounds the ArrayBuffers it cannot.
 */
import { parentPort } from 'node:worker_threads';
import mammoth from 'mammoth';
import { boundedZip, ZipRefused, type ZipLimits } from '../zip';

export type DocxJob = { t: 'job'; id: number; bytes: Uint8Array };
export type DocxReply = { id: number } & ({ t: 'result'; html: string; warnings: string[] } | { t: 'fail'; message: string; refused?: ZipRefused['reason'] });

/**
 * The XML and relationship parts mammoth reads, inflated, at most 64 MiB together: a 20 MB
 * document.xml already takes ~430 MB of the thread's 512 MB heap, so no convertible DOCX needs more.
 */
export const DOCX_LIMITS: ZipLimits = { maxInflatedBytes: 64 * 2 ** 20, maxEntries: 10_000 };
/** Images, fonts and embedded files are never read (images become empty data: URIs). */
const READ = /\.(xml|rels)$/i;

const port = parentPort;
if (!port) throw new Error('docs/docx-worker.ts must run in a worker thread');

port.on('message', async (m: DocxJob) => {
  if (m.t !== 'job') return;
  let reply: DocxReply;
  try {
    const docx = boundedZip(m.bytes, (name) => READ.test(name), DOCX_LIMITS);
    const result = await mammoth.convertToHtml(
      { buffer: docx },
      {
        externalFileAccess: false,
        // Images become empty data: URIs (alt text kept): reading and base64-encoding them
        // costs memory, and markdown drops data: images anyway.
        convertImage: mammoth.images.imgElement(async (image: { contentType: string }) => ({ src: `data:${image.contentType};base64,` })),
      },
    );
    reply = { id: m.id, t: 'result', html: result.value, warnings: result.messages.map((x: { message: string }) => x.message).slice(0, 20) };
  } catch (e) {
    reply = { id: m.id, t: 'fail', message: (e as Error)?.message ?? String(e), ...(e instanceof ZipRefused ? { refused: e.reason } : {}) };
  }
  port.postMessage(reply);
});
