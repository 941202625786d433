import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { namespaceFor, stackDatabase, testInfra } from '@wds/test-utils';
import { connectDb, migrateDb, type DbHandle } from './client';
import { ensureTeam } from './index';
import { getTeamLimits, setTeamLimits, type LimitDefaults } from './limits';

let h: DbHandle;
before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespaceFor(import.meta.url)), { max: 2 });
  await migrateDb(h);
}, { timeout: 120_000 });
after(() => h?.close(), { timeout: 30_000 });

/** The API's defaults (env): the three issue-38 limits beside the older ones. */
const DEFAULTS: LimitDefaults = { ratePerMinute: { scrape: 600 }, maxConcurrency: 100, maxMonitors: 50, agentMaxCredits: 2_500, interactSessionMinutes: 10 };

test('a team without a team_limits row has the defaults: monitors, agent maxCredits ceiling, interact session minutes', async () => {
  const teamId = await ensureTeam(h.db, `limits-${randomUUID()}`);
  const l = await getTeamLimits(h.db, teamId, DEFAULTS);
  assert.deepEqual(l, { ratePerMinute: { scrape: 600 }, creditLimit: null, maxConcurrency: 100, maxMonitors: 50, agentMaxCredits: 2_500, interactSessionMinutes: 10 });
});

test('a row raises a limit field by field (the others keep the default); 0 lifts it; null falls back', async () => {
  const teamId = await ensureTeam(h.db, `limits-${randomUUID()}`);
  await setTeamLimits(h.db, teamId, { interactSessionMinutes: 60, maxMonitors: 0 });
  const l = await getTeamLimits(h.db, teamId, DEFAULTS);
  assert.equal(l.interactSessionMinutes, 60);
  assert.equal(l.maxMonitors, null, '0 = no limit');
  assert.equal(l.agentMaxCredits, 2_500, 'not set in the row: the default');
  assert.equal(l.maxConcurrency, 100);
  await setTeamLimits(h.db, teamId, { agentMaxCredits: 10_000 });
  const again = await getTeamLimits(h.db, teamId, DEFAULTS);
  assert.deepEqual([again.agentMaxCredits, again.interactSessionMinutes, again.maxMonitors], [10_000, 10, 50], 'setTeamLimits replaces the row: unset fields are the defaults again');
});

test('without deployment defaults (the activities read credit limits only), nothing else is bounded', async () => {
  const teamId = await ensureTeam(h.db, `limits-${randomUUID()}`);
  const l = await getTeamLimits(h.db, teamId);
  assert.deepEqual([l.maxMonitors, l.agentMaxCredits, l.interactSessionMinutes, l.maxConcurrency], [null, null, null, null]);
});
