import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'undici';
import type { AppProcess } from '@wds/launch';
import { INSPECT_ARGS } from './gc';

/**
 * CPU profiles of the stack's processes over a bench's measured window only (BENCH_PROFILE_WINDOW
 * = a directory): unlike --cpu-prof (BENCH_PROFILE_DIR), start-up (module loading, bundling) is
 * left out. Each process's main thread, through its inspector (started with INSPECT_ARGS);
 * written as <dir>/<name>.cpuprofile for Chrome DevTools or any .cpuprofile reader.
 */
export const PROFILE_WINDOW_DIR = process.env.BENCH_PROFILE_WINDOW;
export const profileNodeArgs = (): string[] => (PROFILE_WINDOW_DIR ? INSPECT_ARGS : []);

async function send(ws: WebSocket, id: number, method: string, params: unknown = {}): Promise<any> {
  const done = new Promise<any>((resolve, reject) => {
    ws.addEventListener('message', function on(e) {
      const m = JSON.parse(String(e.data));
      if (m.id !== id) return;
      ws.removeEventListener('message', on);
      if (m.error) reject(new Error(m.error.message));
      else resolve(m.result);
    });
  });
  ws.send(JSON.stringify({ id, method, params }));
  return done;
}

/** Starts profiling `apps` now (a no-op without BENCH_PROFILE_WINDOW); `stop` writes the profiles. */
export async function profileWindow(apps: Record<string, AppProcess>): Promise<{ stop(): Promise<void> }> {
  if (!PROFILE_WINDOW_DIR) return { stop: async () => {} };
  const open = await Promise.all(
    Object.entries(apps).map(async ([name, app]) => {
      const url = /Debugger listening on (ws:\/\/\S+)/.exec(app.output())?.[1];
      if (!url) throw new Error(`${name} was not started with INSPECT_ARGS`);
      const ws = new WebSocket(url);
      await new Promise<void>((resolve, reject) => {
        ws.onopen = () => resolve();
        ws.onerror = () => reject(new Error(`cannot reach the inspector of ${name}`));
      });
      await send(ws, 1, 'Profiler.enable');
      await send(ws, 2, 'Profiler.setSamplingInterval', { interval: 500 });
      await send(ws, 3, 'Profiler.start');
      return { name, ws };
    }),
  );
  return {
    async stop() {
      for (const { name, ws } of open) {
        const { profile } = await send(ws, 4, 'Profiler.stop');
        writeFileSync(join(PROFILE_WINDOW_DIR!, `${name}.cpuprofile`), JSON.stringify(profile));
        ws.close();
      }
    },
  };
}
