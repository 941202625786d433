import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportedSamples, metricNames, sampleSum } from './promql';

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

test('sampleSum adds the samples whose labels match exactly', () => {
  const t = '# TYPE r_total counter\nr_total{route="/v2/scrape",status="200"} 3\nr_total{route="/v2/scrape",status="500"} 1\nr_total{route="/v2/scrape/:id",status="200"} 7\nr_total_other 9\nx 2\n';
  assert.equal(sampleSum(t, 'r_total'), 11);
  assert.equal(sampleSum(t, 'r_total', { route: '/v2/scrape' }), 4);
  assert.equal(sampleSum(t, 'r_total', { route: '/v2/scrape', status: '200' }), 3);
  assert.equal(sampleSum(t, 'x'), 2);
  assert.equal(sampleSum(t, 'missing'), 0);
});
