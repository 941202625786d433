import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

export function percentile(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export function summary(samples: number[]) {
  return { n: samples.length, p50: round(percentile(samples, 50)), p95: round(percentile(samples, 95)), mean: round(samples.reduce((a, b) => a + b, 0) / samples.length) };
}

export const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** Resident set size of another process, in MB (Linux). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? round(Number(m[1]) / 1024, 1) : NaN;
}

export function writeResult(name: string, result: unknown): string {
  const dir = new URL('./results/', import.meta.url).pathname;
  mkdirSync(dir, { recursive: true });
  const file = `${dir}${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  writeFileSync(file, JSON.stringify(result, null, 2));
  return file;
}

/** Runs `fn` `total` times with `concurrency` in flight; returns per-call latencies in ms. */
export async function runConcurrent(total: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<number[]> {
  const lat: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t = performance.now();
        await fn(i);
        lat.push(performance.now() - t);
      }
    }),
  );
  return lat;
}
