import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportedSamples, sampleSum } from './promql';

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
