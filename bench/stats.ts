import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';

export function percentile(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export function summary(samples: number[]) {
  return { n: samples.length, p50: round(percentile(samples, 50)), p95: round(percentile(samples, 95)), mean: round(samples.reduce((a, b) => a + b, 0) / samples.length) };
}

export const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/**
 * RSS saws up and down with garbage collection, so one sample before and one after lands at
 * random points of the cycle. Growth is the trend instead: the median of the last quarter of
 * the samples against the median of the first quarter.
 */
export function rssTrend(samples: number[]): number {
  const quarter = Math.max(1, Math.floor(samples.length / 4));
  return round(median(samples.slice(-quarter)) - median(samples.slice(0, quarter)), 1);
}

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

/**
 * Per process: its role and CPU seconds (user+system); processes of no role are left out. A
 * process belongs to the first role whose matcher (a pid, or a pattern of the command line)
 * matches it or one of its ancestors, so a Postgres postmaster brings its backends along.
 */
export function cpuByPid(roles: Record<string, number | RegExp>): Map<number, { role: string; cpu: number; sys: number }> {
  const tick = 100; // USER_HZ on Linux
  const procs = new Map<number, { ppid: number; cmd: string; cpu: number; sys: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const pid = Number(name);
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      // Fields after the parenthesised command name: ppid is the 2nd, utime and stime the 12th and 13th.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(pid, { ppid: Number(f[1]), cmd, cpu: (Number(f[11]) + Number(f[12])) / tick, sys: Number(f[12]) / tick });
    } catch {
      // the process exited while being read
    }
  }
  const roleOf = (pid: number, hops = 0): string | undefined => {
    const p = procs.get(pid);
    if (!p || hops > 20) return undefined;
    const own = Object.entries(roles).find(([, m]) => (typeof m === 'number' ? m === pid : m.test(p.cmd)))?.[0];
    return own ?? roleOf(p.ppid, hops + 1);
  };
  const out = new Map<number, { role: string; cpu: number; sys: number }>();
  for (const [pid, p] of procs) {
    const role = roleOf(pid);
    if (role) out.set(pid, { role, cpu: p.cpu, sys: p.sys });
  }
  return out;
}

/**
 * CPU seconds per role used between two cpuByPid snapshots, counted per process: one that exited
 * in between (a Postgres backend) would otherwise take all its earlier CPU time out of the sum.
 */
export function cpuUsedBetween(before: ReturnType<typeof cpuByPid>, after: ReturnType<typeof cpuByPid>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [pid, { role, cpu }] of after) out[role] = (out[role] ?? 0) + cpu - (before.get(pid)?.cpu ?? 0);
  return out;
}

/** Of cpuUsedBetween, the share spent in the kernel (system time) per role, rounded to 0.01. */
export function sysShareBetween(before: ReturnType<typeof cpuByPid>, after: ReturnType<typeof cpuByPid>): Record<string, number> {
  const cpu = cpuUsedBetween(before, after);
  const sys: Record<string, number> = {};
  for (const [pid, a] of after) sys[a.role] = (sys[a.role] ?? 0) + a.sys - (before.get(pid)?.sys ?? 0);
  return Object.fromEntries(Object.entries(sys).map(([k, v]) => [k, round(v / (cpu[k] || 1), 2)]));
}

/** cpuUsedBetween in CPU seconds rounded to 0.1, for reports. */
export function cpuSecondsBetween(before: ReturnType<typeof cpuByPid>, after: ReturnType<typeof cpuByPid>): Record<string, number> {
  return Object.fromEntries(Object.entries(cpuUsedBetween(before, after)).map(([k, v]) => [k, round(v, 1)]));
}
