/**
 * The metric names a PromQL expression reads. Not a full parser: enough for dashboard checks
 * (strings, label matchers, ranges, Grafana variables, function calls and by/without/on/ignoring
 * /group_* clauses are removed; what is left that looks like an identifier is a metric name).
 */
const KEYWORDS = new Set([
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'and', 'or', 'unless', 'inf', 'nan',
  'sum', 'min', 'max', 'avg', 'count', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'count_values', 'group',
]);

export function metricNames(expr: string): string[] {
  let e = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // strings
    .replace(/\$\{[^}]*\}|\$\w+/g, '1') // Grafana variables ($__rate_interval, ${job})
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // ranges and subqueries
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // label lists
  e = e.replace(/\b\d+(\.\d+)?(e[+-]?\d+)?[smhdwy]?\b/gi, ' ');
  const names = new Set<string>();
  const re = /[a-zA-Z_:][a-zA-Z0-9_:]*/g;
  for (let m = re.exec(e); m; m = re.exec(e)) {
    const rest = e.slice(m.index + m[0].length);
    if (/^\s*\(/.test(rest)) continue; // a function or aggregation call
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

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
