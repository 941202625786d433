import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { connectDb, ensureTeam, insertJob, loadJob, migrateDb, type DbHandle } from '@wds/db';
import { namespaceFor, stackDatabase, testInfra, until } from '@wds/test-utils';
import { startJobSweeper } from './stranded';

/**
 * The one stranded-job sweeper against a real Postgres and a real Temporal: a job whose workflow
 * was never started is failed, one asked to stop is cancelled, one whose workflow is open (on a
 * queue no worker serves: Temporal still says running) is left alone, and a young job too.
 */
const namespace = namespaceFor(import.meta.url);
let h: DbHandle;
let connection: Connection;
let client: Client;
let teamId: string;

before(async () => {
  h = connectDb(await stackDatabase(testInfra().databaseUrl, namespace), { max: 5 });
  await migrateDb(h);
  teamId = await ensureTeam(h.db, 'stranded');
  connection = await Connection.connect({ address: testInfra().temporalAddress });
  client = new Client({ connection, namespace });
});
after(async () => {
  await connection?.close();
  await h?.close();
});

test('jobs no workflow runs end (failed, or cancelled when asked to stop); running and young ones stay', async () => {
  const [missing, cancelling, open, young] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  await insertJob(h.db, { id: missing, teamId, kind: 'parse', status: 'running', workflowId: `parse-${missing}` });
  await insertJob(h.db, { id: cancelling, teamId, kind: 'map', status: 'cancelling', workflowId: `map-${cancelling}` });
  await insertJob(h.db, { id: open, teamId, kind: 'map', status: 'running', workflowId: `map-${open}` });
  await insertJob(h.db, { id: young, teamId, kind: 'map', status: 'running', workflowId: `map-${young}` });
  await h.pool.query(`UPDATE jobs SET created_at = now() - interval '1 hour' WHERE id = ANY($1)`, [[missing, cancelling, open]]);
  await client.workflow.start('mapWorkflow', { taskQueue: `nobody-${randomUUID()}`, workflowId: `map-${open}`, args: [{ jobId: open, timeoutMs: 1000 }] });
  const ended: string[] = [];
  const sweeper = startJobSweeper({ db: h.db, temporal: connection, namespace, graceMs: 60_000, everyMs: 200, onFailed: (id) => ended.push(id) });
  try {
    await until(async () => (await loadJob(h.db, missing))?.status === 'failed' && (await loadJob(h.db, cancelling))?.status === 'cancelled', 'the stranded jobs to end', { timeoutMs: 20_000 });
    const failed = await loadJob(h.db, missing);
    assert.match(failed!.error!.message, /workflow was never started/);
    assert.equal((await loadJob(h.db, cancelling))!.error, null, 'a job asked to stop ends cancelled, not failed');
    // A few more sweeps: nothing else ends, and nothing ends twice.
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal((await loadJob(h.db, open))!.status, 'running');
    assert.equal((await loadJob(h.db, young))!.status, 'running');
    assert.deepEqual(ended.sort(), [missing, cancelling].sort());
  } finally {
    await sweeper.stop();
    await client.workflow.getHandle(`map-${open}`).terminate().catch(() => {});
  }
});
