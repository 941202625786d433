import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseTbs } from './tbs';

const now = new Date('2026-11-25T12:00:00Z');

test('qdr ranges, with counts', () => {
  assert.deepEqual(parseTbs('qdr:h', now), { since: new Date('2026-11-25T11:00:00Z'), until: null, sortByDate: false, range: 'h' });
  assert.equal((parseTbs('qdr:d3', now) as { since: Date }).since.toISOString(), '2026-11-22T12:00:00.000Z');
  assert.equal((parseTbs('qdr:m', now) as { since: Date }).since.toISOString(), '2026-10-25T12:00:00.000Z');
  assert.equal((parseTbs('qdr:y', now) as { since: Date }).since.toISOString(), '2025-11-25T12:00:00.000Z');
});

test('custom ranges cover whole days; sbd sorts by date; parts combine', () => {
  const r = parseTbs('sbd:1,cdr:1,cd_min:12/1/2024,cd_max:12/31/2024', now);
  assert.deepEqual(r, { since: new Date('2024-12-01T00:00:00.000Z'), until: new Date('2024-12-31T23:59:59.999Z'), sortByDate: true, range: null });
  assert.deepEqual(parseTbs('sbd:1,qdr:w', now), { since: new Date('2026-11-18T12:00:00Z'), until: null, sortByDate: true, range: 'w' });
});

test('what it cannot read is an error naming the part', () => {
  assert.match((parseTbs('qdr:x') as { error: string }).error, /qdr must be/);
  assert.match((parseTbs('qdr:d0') as { error: string }).error, /at least 1/);
  assert.match((parseTbs('cd_min:1/1/2020') as { error: string }).error, /need cdr:1/);
  assert.match((parseTbs('cdr:1,cd_min:2/30/2020') as { error: string }).error, /MM\/DD\/YYYY/);
  assert.match((parseTbs('cdr:1,cd_min:2/1/2021,cd_max:1/1/2021') as { error: string }).error, /after cd_max/);
  assert.match((parseTbs('foo:1') as { error: string }).error, /unknown part 'foo:1'/);
  assert.match((parseTbs('sbd:2') as { error: string }).error, /sbd must be/);
});
