import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sessionLifeMs } from './team-caps';

test("an interact session lives its team's minutes, never past the deployment's ceiling", () => {
  const hour = 3_600_000;
  assert.equal(sessionLifeMs(hour, { interactSessionMinutes: 10 }), 10 * 60_000, 'the default team limit');
  assert.equal(sessionLifeMs(hour, { interactSessionMinutes: 120 }), hour, 'a team raised above the ceiling still stops at it');
  assert.equal(sessionLifeMs(8_000, { interactSessionMinutes: 10 }), 8_000);
  assert.equal(sessionLifeMs(hour, { interactSessionMinutes: null }), hour, 'no team limit: the ceiling');
});
