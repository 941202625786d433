/**
 * A process's peak resident memory (Linux `/proc/<pid>/status` VmHWM), and resetting it
 * (`clear_refs` 5) so that a test measures the peak of one step only — a transient copy of a large
 * value shows there even after it was collected.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export function resetPeakRss(pid: number | 'self' = 'self'): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** Bytes. */
export function peakRss(pid: number | 'self' = 'self'): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kb) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(kb) * 1024;
}
