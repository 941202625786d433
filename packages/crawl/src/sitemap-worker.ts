/** A sitemap parser thread (see sitemap-thread.ts): one file at a time. */
import { parentPort } from 'node:worker_threads';
import { parseSitemap } from './sitemap';
import type { SitemapJob, SitemapReply } from './sitemap-thread';

const port = parentPort;
if (!port) throw new Error('sitemap-worker.ts must run in a worker thread');

port.on('message', (job: SitemapJob) => {
  const body = Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength);
  parseSitemap(body, job.limits).then(
    (entries) => port.postMessage({ id: job.id, entries } satisfies SitemapReply),
    (e: unknown) => port.postMessage({ id: job.id, error: e instanceof Error ? e.message : String(e) } satisfies SitemapReply),
  );
});
