/**
 * DOCX → HTML with mammoth, in a worker thread: a DOCX is a ZIP, and a
 * hostile one (a zip bomb, a huge document.xml) must be killable and must not
 * exhaust the main heap.
 */
import { parentPort } from 'node:worker_threads';
import mammoth from 'mammoth';

export type DocxJob = { t: 'job'; id: number; bytes: Uint8Array };
export type DocxReply = { id: number } & ({ t: 'result'; html: string; warnings: string[] } | { t: 'fail'; message: string });

const port = parentPort;
if (!port) throw new Error('docs/docx-worker.ts must run in a worker thread');

port.on('message', async (m: DocxJob) => {
  if (m.t !== 'job') return;
  let reply: DocxReply;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength) },
      {
        externalFileAccess: false,
        // Images become empty data: URIs (alt text kept): reading and base64-encoding them
        // costs memory, and markdown drops data: images anyway.
        convertImage: mammoth.images.imgElement(async (image: { contentType: string }) => ({ src: `data:${image.contentType};base64,` })),
      },
    );
    reply = { id: m.id, t: 'result', html: result.value, warnings: result.messages.map((x: { message: string }) => x.message).slice(0, 20) };
  } catch (e) {
    reply = { id: m.id, t: 'fail', message: (e as Error)?.message ?? String(e) };
  }
  port.postMessage(reply);
});
