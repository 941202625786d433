/**
 * A transform thread: turns HTML pages into formats (transformHtml) and answers the escalation
 * test (looksClientRendered) for the main thread, so a worker process converts pages on every
 * core while its main thread does the I/O. Messages are handled one at a time, in arrival order.
 */
import { parentPort } from 'node:worker_threads';
import { toWdsError } from '@wds/errors';
import { runTransformJob, type TransformJob, type TransformReply } from './transform-jobs';

const port = parentPort;
if (!port) throw new Error('transform-worker.ts must run in a worker thread');

port.on('message', (job: TransformJob) => {
  let reply: TransformReply;
  try {
    reply = { id: job.id, result: runTransformJob(job) };
  } catch (e) {
    reply = { id: job.id, error: toWdsError(e).toJSON() };
  }
  port.postMessage(reply);
});
port.postMessage({ ready: true });
