import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cron } from 'croner';
import { nextDueAt, nextFiring, normalizeSchedule, textToCron } from './monitor-schedule';

const ID = '3f0c9c1e-0a7b-4d0e-9a55-2d2f2f6b8a11';

test('the docs\' phrases become cron, spread by monitor id where no time is given', () => {
  assert.match(textToCron('every 30 minutes', ID, false)!, /^\d{1,2}-59\/30 \* \* \* \*$/);
  assert.equal(textToCron('every 15 minutes starting at :07', ID, false), '7-59/15 * * * *');
  assert.match(textToCron('hourly', ID, false)!, /^\d{1,2} \* \* \* \*$/);
  assert.match(textToCron('every 2 hours', ID, false)!, /^\d{1,2} [01]-23\/2 \* \* \*$/);
  assert.equal(textToCron('daily at 9:00', ID, false), '0 9 * * *');
  assert.equal(textToCron('daily at 9am', ID, false), '0 9 * * *');
  assert.equal(textToCron('daily at 5:30 PM', ID, false), '30 17 * * *');
  assert.match(textToCron('weekly', ID, false)!, /^\d{1,2} \d{1,2} \* \* [0-6]$/);
  assert.equal(textToCron('every 10 seconds', ID, false), null, 'seconds only when the floor allows them');
  assert.equal(textToCron('now and then', ID, false), null);
  // Different monitors land on different minutes.
  const minutes = new Set(Array.from({ length: 50 }, (_, i) => textToCron('every 30 minutes', `id-${i}`, false)!.split('-')[0]));
  assert.ok(minutes.size > 10);
});

test('the 5-minute floor, five fields, timezones', () => {
  const bad = (s: { cron?: string; text?: string; timezone?: string }) => 'problems' in normalizeSchedule(s, ID, 300);
  assert.ok(bad({ cron: '* * * * *' }), 'every minute is refused');
  assert.ok(bad({ cron: '0,1 * * * *' }), 'two firings a minute apart are refused');
  assert.ok(bad({ cron: '* * 1 1 *' }), 'every minute on one day is found');
  assert.ok(bad({ cron: '*/10 * * * * *' }), 'six fields refused at the 5-minute floor');
  assert.ok(bad({ cron: '*/5 * * * *', timezone: 'Nowhere/Land' }));
  assert.ok(bad({ text: 'every 2 minutes' }));
  assert.ok(bad({}));
  assert.deepEqual(normalizeSchedule({ cron: '*/5  * * * *', timezone: 'Europe/Berlin' }, ID, 300), { schedule: { cron: '*/5 * * * *', timezone: 'Europe/Berlin' } });
  assert.ok(!bad({ text: 'every 10 seconds' }) === false);
  assert.ok(!('problems' in normalizeSchedule({ text: 'every 10 seconds' }, ID, 5)));
});

test('next due times match croner\'s zone handling, across a daylight-saving change too', () => {
  for (const [expr, tz] of [['0 9 * * *', 'Europe/Berlin'], ['30 2 * * *', 'America/New_York'], ['*/5 * * * *', 'Asia/Kolkata'], ['15 1 * * *', 'Europe/London']] as const) {
    const exact = new Cron(expr, { timezone: tz, paused: true });
    for (let t = Date.UTC(2026, 2, 25); t < Date.UTC(2026, 3, 2); t += 3_600_000 * 5) {
      assert.equal(nextFiring(expr, tz, new Date(t))?.toISOString(), exact.nextRun(new Date(t))?.toISOString(), `${expr} ${tz} after ${new Date(t).toISOString()}`);
    }
  }
});

test('jitter: a stable offset below a fifth of the interval, and a due time never in the past', () => {
  const s = { cron: '*/5 * * * *', timezone: 'UTC' };
  const now = new Date(Date.UTC(2026, 0, 1, 12, 1, 0));
  const a = nextDueAt(s, ID, now, 60_000)!;
  assert.equal(nextDueAt(s, ID, now, 60_000)!.getTime(), a.getTime());
  const offset = a.getTime() % 300_000;
  assert.ok(offset < 60_000 && a > now);
  assert.equal(nextDueAt(s, ID, now, 0)!.toISOString(), '2026-01-01T12:05:00.000Z');
});
