import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Runs the API or a worker as its own OS process, exactly as `npm run api` / `npm run worker`
 * would on a fleet machine; used by the embedded launcher and by end-to-end tests.
 */
// Resolved as files to run, not imported: this package never loads an app's code.
const ENTRY = {
  api: fileURLToPath(import.meta.resolve('@wds/api/main')),
  worker: fileURLToPath(import.meta.resolve('@wds/worker/main')),
} as const;
// The messages of the processes' JSON log lines that say they are ready (a URL ends at a quote).
const READY_LINE = { api: /wds-api: listening on ([^\s"]+)/, worker: /wds-worker: serving/ } as const;

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
  const { child, ready, output } = await spawnUntilReady(kind, [ENTRY[kind]], { ...process.env, ...env }, READY_LINE[kind], opts);
  const metricsUrl = kind === 'worker' ? /wds-worker: metrics on ([^\s"]+\/metrics)/.exec(output())?.[1] : undefined;
  return { child, url: ready[1], metricsUrl, output };
}

/**
 * Runs a TypeScript entry point with node + tsx and resolves once its stdout matches `ready`
 * (rejects if it exits first or takes longer than `timeoutMs`). Output is kept (last 20 kB).
 */
export async function spawnUntilReady(
  name: string,
  args: string[],
  env: Record<string, string | undefined>,
  ready: RegExp,
  opts: { timeoutMs?: number; echo?: boolean; nodeArgs?: string[] } = {},
): Promise<{ child: ChildProcess; ready: RegExpExecArray; output(): string }> {
  // Generous: a worker's start (transpiling its imports, opening its pools) took over 60 s on a 2-core host under a full test suite's load.
  const timeoutMs = opts.timeoutMs ?? 150_000;
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const onData = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
    if (opts.echo) process.stdout.write(d);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A child that missed its start must not outlive the caller (it would keep a test process alive).
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const check = () => {
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(m);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with code ${code} before it was ready:\n${out}`));
    });
  });
  return { child, ready: match, output: () => out };
}
