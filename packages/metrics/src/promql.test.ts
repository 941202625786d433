import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportedSamples, metricNames } from './promql';

test('metricNames finds metric names and skips functions, labels, ranges and variables', () => {
  assert.deepEqual(
    metricNames('histogram_quantile(0.99, sum by (le, route) (rate(wds_http_request_duration_seconds_bucket{route!~"/metrics|/health"}[$__rate_interval])))'),
    ['wds_http_request_duration_seconds_bucket'],
  );
  assert.deepEqual(metricNames('sum(rate(a_total[5m])) / ignoring(status) group_left sum(b_total{x="y"}) or vector(0)').sort(), ['a_total', 'b_total']);
  assert.deepEqual(metricNames('up{job=~"wds-.*"} == 1'), ['up']);
  assert.deepEqual(metricNames('max_over_time(temporal_worker_task_slots_available{worker_type="ActivityWorker"}[1m] offset 5m)'), ['temporal_worker_task_slots_available']);
});

test('exportedSamples lists series names with samples only', () => {
  const s = exportedSamples('# HELP x_total help\n# TYPE x_total counter\nx_total{a="b"} 1\n# HELP y help\ny_bucket{le="1"} 0\n');
  assert.deepEqual([...s].sort(), ['x_total', 'y_bucket']);
});
