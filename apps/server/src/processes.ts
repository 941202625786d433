import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Runs the API or a worker as its own OS process, exactly as `npm run api` / `npm run worker`
 * would on a fleet machine; used by the embedded launcher and by end-to-end tests.
 */
const ENTRY = {
  api: fileURLToPath(new URL('../../api/src/main.ts', import.meta.url)),
  worker: fileURLToPath(new URL('../../worker/src/main.ts', import.meta.url)),
} as const;
const READY_LINE = { api: /wds-api: listening on (\S+)/, worker: /wds-worker: serving/ } as const;

export interface AppProcess {
  child: ChildProcess;
  /** For the API: the base URL it printed. */
  url?: string;
  /** For a worker: its prom-client endpoint, as printed (WDS_METRICS_PORT=0 picks the port). */
  metricsUrl?: string;
  output(): string;
}

export async function spawnApp(
  kind: 'api' | 'worker',
  env: Record<string, string | undefined>,
  opts: { timeoutMs?: number; echo?: boolean; nodeArgs?: string[] } = {},
): Promise<AppProcess> {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', ENTRY[kind]], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const onData = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
    if (opts.echo) process.stdout.write(d);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const url = await new Promise<string | undefined>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${kind} did not start within ${opts.timeoutMs ?? 60_000} ms:\n${out}`)), opts.timeoutMs ?? 60_000);
    const check = () => {
      const m = READY_LINE[kind].exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${kind} exited with code ${code} before it was ready:\n${out}`));
    });
  });
  const metricsUrl = kind === 'worker' ? /wds-worker: metrics on (\S+\/metrics)/.exec(out)?.[1] : undefined;
  return { child, url, metricsUrl, output: () => out };
}
