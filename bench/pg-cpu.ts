import { readdirSync, readFileSync } from 'node:fs';

/** CPU ms of every process of this Postgres (backends, WAL writer, autovacuum: GIN cleanup can land in any). */
export function pgCpuMs(dataDir: string): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dataDir) && !isChildOfPg(pid, dataDir)) continue;
      total += Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
    } catch {
      /* gone */
    }
  }
  return total;
}
const pgPids = new Map<string, boolean>();
export function isChildOfPg(pid: string, dataDir: string): boolean {
  if (pgPids.has(pid)) return pgPids.get(pid)!;
  let yes = false;
  try {
    const ppid = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]!;
    yes = readFileSync(`/proc/${ppid}/cmdline`, 'utf8').includes(dataDir);
  } catch {
    /* gone */
  }
  pgPids.set(pid, yes);
  return yes;
}
