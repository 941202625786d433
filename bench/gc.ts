import { WebSocket } from 'undici';
import type { AppProcess } from '@wds/launch';
import { rssMb } from './stats';

/** Node flags for a process whose heap the bench may collect (inspector on a free local port). */
export const INSPECT_ARGS = ['--inspect=127.0.0.1:0'];

/**
 * RSS right after a full garbage collection of the process's main thread, through its
 * inspector (started with INSPECT_ARGS). Plain RSS saws up and down by tens of MB with V8's
 * collection cycle, so two plain samples can show growth that the next collection gives back;
 * after a forced collection what remains is memory the process actually holds.
 */
export async function rssAfterGcMb(app: AppProcess): Promise<number> {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(app.output())?.[1];
  if (!url) throw new Error('the process was not started with INSPECT_ARGS');
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`cannot reach the inspector at ${url}`));
  });
  try {
    // Twice: the first collection's finalizers free more for the second.
    for (const id of [1, 2]) {
      const done = new Promise<void>((resolve) => {
        ws.onmessage = (e) => JSON.parse(String(e.data)).id === id && resolve();
      });
      ws.send(JSON.stringify({ id, method: 'HeapProfiler.collectGarbage' }));
      await done;
    }
  } finally {
    ws.close();
  }
  // The freed pages are returned to the OS right after the collection; give it a moment.
  await new Promise((r) => setTimeout(r, 200));
  return rssMb(app.child.pid!);
}
