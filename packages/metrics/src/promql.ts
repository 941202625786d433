/** Sample names present in a Prometheus text exposition (series with at least one sample). */
export function exportedSamples(text: string): Set<string> {
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (m) out.add(m[0]);
  }
  return out;
}

/**
 * Sum of the samples of `name` in a Prometheus text exposition whose labels include every pair
 * of `labels` (exact values): how tests read counters without a Prometheus server.
 */
export function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = new Map<string, string>();
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) have.set(l[1]!, l[2]!);
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) sum += Number(m[3]);
  }
  return sum;
}
