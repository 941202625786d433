import { readdirSync, readFileSync } from 'node:fs';

export interface TreeMemory {
  rssNode: number;
  rssChildren: number;
  pss: number;
  processes: number;
}

/** RSS and PSS (bytes) of a process and all its descendants, from /proc. */
export function treeMemory(root: number, withPss: boolean): TreeMemory {
  const parent = new Map<number, number>();
  const rss = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const status = readFileSync(`/proc/${d}/status`, 'utf8');
      const pp = /PPid:\s+(\d+)/.exec(status);
      const r = /VmRSS:\s+(\d+) kB/.exec(status);
      parent.set(Number(d), pp ? Number(pp[1]) : 0);
      rss.set(Number(d), r ? Number(r[1]) * 1024 : 0);
    } catch {
      // exited while we looked
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; p = parent.get(p) ?? 0, hops++) if (p === root) return true;
    return false;
  };
  const mem: TreeMemory = { rssNode: rss.get(root) ?? 0, rssChildren: 0, pss: 0, processes: 1 };
  for (const [pid, r] of rss) {
    const mine = pid === root;
    if (!mine && !inTree(pid)) continue;
    if (!mine) {
      mem.rssChildren += r;
      mem.processes++;
    }
    if (withPss) {
      try {
        const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
        mem.pss += m ? Number(m[1]) * 1024 : 0;
      } catch {
        // exited, or no smaps_rollup
      }
    }
  }
  return mem;
}
