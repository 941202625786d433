import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { collectTarget } from '@wds/db';
import { call, html, namespaceFor, startFakeOpenAI, startFixtureSite, startStack, until, type FakeChatRequest, type FakeOpenAI, type FakeReply, type FixtureSite, type Stack, FAST_MONITOR_ENV } from '@wds/test-utils';

// Retention of crawl, batch-scrape and agent results (packages/db retention.ts): 24 hours after a
// job ended, the control workers' sweep (every 500 ms here) deletes it with its pages, frontier,
// events and transcripts; its status endpoints then answer as for an unknown id; its ledger
// entries stay. Expiry is made by moving the job's dates back in the database, never by waiting.
// (The extract case is in extract.test.ts, with the extract machinery it needs.)
let stack: Stack;
let site: FixtureSite;
let model: FakeOpenAI;
let fc: Firecrawl;
/** Responses of /hold kept open: a crawl fetching it stays running until the test lets it go. */
const held: ServerResponse[] = [];
let releaseAgent: () => void = () => {};
const agentGate = new Promise<void>((r) => (releaseAgent = r));
const WAIT = { timeoutMs: 90_000, everyMs: 200 };
const T = { timeout: 240_000 };

const PAGE = (title: string, body: string) => `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
const tagOf = (r: FakeChatRequest) => /\[([\w-]+)\]/.exec(String(r.messages.find((m) => m.role === 'user')?.content ?? ''))?.[1] ?? '';
const stepOf = (r: FakeChatRequest) => r.messages.filter((m) => m.role === 'assistant').length + 1;
const tool = (name: string, args: unknown) => ({ name, arguments: args });

before(async () => {
  site = await startFixtureSite({
    '/a': html(PAGE('Alpha', '<p>Alpha kettle page.</p><a href="/b">b</a>')),
    '/b': html(PAGE('Beta', '<p>Beta toaster page.</p>')),
    '/hook': (_q, r) => void r.writeHead(200).end('ok'),
    '/hold': (_q, r) => void held.push(r),
  });
  model = await startFakeOpenAI({
    handler: async (r): Promise<FakeReply> => {
      // [scrape]: one scrape (a billed tool call, a page snapshot), then finish; [hold]: the model
      // answers only once the test releases it, so the job runs until then; others finish at once.
      if (tagOf(r) === 'scrape' && stepOf(r) === 1) return { toolCalls: [tool('scrape', { url: site.url('/a') })] };
      if (tagOf(r) === 'hold') await agentGate;
      return { toolCalls: [tool('finish', { data: { tag: tagOf(r) } })] };
    },
  });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: {
      ...model.env,
      WDS_STRANDED_JOB_SWEEP_MS: '500',
      ...FAST_MONITOR_ENV,
    },
  });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  releaseAgent();
  for (const r of held.splice(0)) r.end();
  await stack?.stop();
  await site?.close();
  await model?.close();
});

const q = async <T extends Record<string, unknown>>(text: string, params: unknown[] = []) => (await stack.db.pool.query(text, params)).rows as T[];

/** Every row a crawl or batch job has, by table, and its ledger entries (which must stay). */
async function crawlRows(id: string) {
  const [r] = await q<Record<string, number>>(
    `SELECT (SELECT count(*) FROM jobs WHERE id = $1)::int + (SELECT count(*) FROM crawl_jobs WHERE id = $1)::int AS job, (SELECT count(*) FROM crawl_urls WHERE job_id = $1)::int AS urls,
            (SELECT count(*) FROM crawl_documents WHERE job_id = $1)::int AS docs, (SELECT count(*) FROM job_events WHERE job_id = $1)::int AS events,
            (SELECT count(*) FROM job_event_heads WHERE job_id = $1)::int AS heads, (SELECT count(*) FROM webhook_deliveries WHERE job_id = $1)::int AS hooks,
            (SELECT count(*) FROM credit_ledger WHERE job_id = $1)::int AS ledger`,
    [id],
  );
  return r!;
}

/** Every row an agent job has (its runs, their transcripts, snapshots and trace events), and its ledger entries. */
async function agentRows(id: string) {
  const [r] = await q<Record<string, number>>(
    `SELECT (SELECT count(*) FROM agent_runs WHERE root_id = $1)::int AS runs, (SELECT count(*) FROM agent_messages m JOIN agent_runs r ON r.id = m.run_id WHERE r.root_id = $1)::int AS messages,
            (SELECT count(*) FROM agent_snapshots WHERE job_id = $1)::int AS snapshots, (SELECT count(*) FROM job_events WHERE job_id = $1)::int AS events,
            (SELECT count(*) FROM credit_ledger WHERE job_id = $1)::int AS ledger`,
    [id],
  );
  return r!;
}

/** What a status route answers for an id nobody has: an expired job's must be the same. */
async function unknownAnswer(path: string) {
  const r = await call(stack, 'GET', path.replace('{id}', randomUUID()));
  assert.equal(r.status, 404);
  return { status: r.status, json: r.json };
}
async function answer(path: string, id: string) {
  const r = await call(stack, 'GET', path.replace('{id}', id));
  return { status: r.status, json: r.json };
}

async function crawlDone(id: string, client = fc) {
  return until(async () => {
    const s = await client.getCrawlStatus(id, { autoPaginate: false });
    return s.status === 'scraping' ? null : s;
  }, `crawl ${id} to end`, WAIT);
}

async function agentDone(id: string) {
  return until(async () => {
    const s = await fc.getAgentStatus(id);
    return s.status === 'processing' ? null : s;
  }, `agent ${id} to end`, WAIT);
}

const crawlOf = async (client: Firecrawl, path: string, extra: Record<string, unknown> = {}) =>
  (await client.startCrawl(site.url(path), { limit: 2, sitemap: 'skip', crawlEntireDomain: true, ...extra } as never)).id;

describe('crawls and batch scrapes', () => {
  test('expired ended ones go whole (status then as for an unknown id); running, recent and other teams\' ones stay; the ledger stays', T, async () => {
    const other = await stack.newTeam();
    const otherFc = new Firecrawl({ apiKey: other.apiKey, apiUrl: stack.url });
    const [oldCrawl, freshCrawl, lateCrawl, otherCrawl] = await Promise.all([
      crawlOf(fc, '/a', { webhook: { url: site.url('/hook'), events: ['completed'] } }),
      crawlOf(fc, '/a'),
      crawlOf(fc, '/a'),
      // The same pages for another team: same URL keys, its own job.
      crawlOf(otherFc, '/a'),
    ]);
    const oldBatch = (await fc.startBatchScrape([site.url('/a'), site.url('/b')], {} as never)).id;
    for (const id of [oldCrawl, freshCrawl, lateCrawl]) assert.equal((await crawlDone(id)).status, 'completed');
    assert.equal((await crawlDone(otherCrawl, otherFc)).status, 'completed');
    await until(async () => ((await fc.getBatchScrapeStatus(oldBatch, { autoPaginate: false })).status === 'completed' ? true : null), 'the batch to end', WAIT);
    // A crawl held on a page that does not answer: running whatever its dates.
    const running = await crawlOf(fc, '/hold', { limit: 1, scrapeOptions: { timeout: 120_000 } });
    await until(() => (held.length ? true : null), 'the running crawl to fetch /hold', WAIT);

    const before = Object.fromEntries(await Promise.all([oldCrawl, oldBatch, freshCrawl, lateCrawl, otherCrawl].map(async (id) => [id, await crawlRows(id)])));
    for (const id of [oldCrawl, oldBatch]) assert.ok(before[id].docs === 2 && before[id].urls === 2 && before[id].events > 0 && before[id].ledger > 0, JSON.stringify(before[id]));
    assert.equal(before[oldCrawl].hooks, 1, 'the completed webhook was delivered');
    // Results expire 24 hours after the job ended, not after it started.
    const [moved] = await q<{ ok: boolean }>(`SELECT expires_at BETWEEN finished_at + interval '23 hours' AND finished_at + interval '25 hours' AS ok FROM jobs WHERE id = $1`, [freshCrawl]);
    assert.equal(moved!.ok, true);
    const indexed = async (teamId: string) => Number((await q<{ n: string }>(`SELECT count(*) AS n FROM search_pages WHERE team_id = $1`, [teamId]))[0]!.n);
    const searchable = await indexed(stack.teamId);
    assert.ok(searchable >= 2);

    // One statement moves every date, so the sweep that takes the expired jobs saw the others too:
    // expired and ended a day ago (old ones); expires_at passed but still running. (A row from before
    // the job kernel whose expiry was counted from its start got its end's in the migration:
    // packages/db crawl-migration.test.ts.)
    await q(
      `UPDATE jobs SET expires_at = now() - interval '1 second',
         finished_at = CASE WHEN id = ANY($1::uuid[]) THEN now() - interval '25 hours' ELSE finished_at END
       WHERE id = ANY($1::uuid[]) OR id = $2`,
      [[oldCrawl, oldBatch], running],
    );
    await until(async () => ((await crawlRows(oldCrawl)).job + (await crawlRows(oldBatch)).job === 0 ? true : null), 'the sweep to delete the expired crawl and batch', WAIT);

    for (const id of [oldCrawl, oldBatch]) {
      assert.deepEqual(await crawlRows(id), { job: 0, urls: 0, docs: 0, events: 0, heads: 0, hooks: 0, ledger: before[id].ledger }, 'its rows went with it; its bill stays');
    }
    for (const path of ['/v2/crawl/{id}', '/v2/crawl/{id}/errors']) assert.deepEqual(await answer(path, oldCrawl), await unknownAnswer(path));
    for (const path of ['/v2/batch/scrape/{id}', '/v2/batch/scrape/{id}/errors']) assert.deepEqual(await answer(path, oldBatch), await unknownAnswer(path));

    const [run] = await q<{ status: string }>(`SELECT status FROM jobs WHERE id = $1`, [running]);
    assert.equal(run?.status, 'running', 'a running job is never taken');
    for (const id of [freshCrawl, lateCrawl, otherCrawl]) assert.deepEqual(await crawlRows(id), before[id], 'kept whole');
    assert.equal((await fc.getCrawlStatus(lateCrawl)).data.length, 2);
    assert.equal((await otherFc.getCrawlStatus(otherCrawl)).data.length, 2);
    assert.equal(await indexed(stack.teamId), searchable, "the team's search index is the team's, not the job's");

    for (const r of held.splice(0)) r.end(PAGE('Held', '<p>late</p>'));
    assert.equal((await crawlDone(running)).status, 'completed');
  });
});

describe('agent jobs', () => {
  test('expired ended ones go whole (a thread once its last turn expired); a running one stays; the ledger stays', T, async () => {
    const old = (await fc.startAgent({ prompt: '[scrape] Read the alpha page' })).id;
    const fresh = (await fc.startAgent({ prompt: '[fresh] Nothing' })).id;
    const turn1 = await fc.startAgent({ prompt: '[turn1] First' });
    assert.equal((await agentDone(turn1.id)).status, 'completed');
    const turn2 = (await fc.startAgent({ prompt: '[turn2] Second', threadId: turn1.threadId })).id;
    for (const id of [old, fresh, turn2]) assert.equal((await agentDone(id)).status, 'completed');
    const running = (await fc.startAgent({ prompt: '[hold] Wait' })).id;
    await until(() => (model.chatRequests().some((r) => tagOf(r) === 'hold') ? true : null), 'the held agent to ask the model', WAIT);

    const before = Object.fromEntries(await Promise.all([old, fresh, turn1.id, turn2].map(async (id) => [id, await agentRows(id)])));
    assert.ok(before[old].runs === 1 && before[old].messages > 0 && before[old].snapshots > 0 && before[old].events > 0 && before[old].ledger > 0, JSON.stringify(before[old]));

    // A thread's turns expire together, 24 h after its last turn ended: its first turn stays while it can be continued.
    const expiry = async (id: string) => (await q<{ e: Date | null }>(`SELECT expires_at AS e FROM jobs WHERE id = $1`, [id]))[0]!.e;
    assert.ok(await expiry(turn2));
    assert.equal((await expiry(turn1.id))?.getTime(), (await expiry(turn2))?.getTime(), "the first turn expires with the thread's last");
    // The old job expired, the running one's time too (a running job is never taken, whatever its expiry).
    await q(`UPDATE jobs SET expires_at = now() - interval '1 second' WHERE id = ANY($1::uuid[])`, [[old, running]]);
    await until(async () => ((await agentRows(old)).runs === 0 ? true : null), 'the sweep to delete the expired agent job', WAIT);
    assert.deepEqual(await agentRows(old), { runs: 0, messages: 0, snapshots: 0, events: 0, ledger: before[old].ledger }, 'its rows went with it; its bill stays');
    for (const path of ['/v2/agent/{id}', '/v2/agent/{id}/trace']) assert.deepEqual(await answer(path, old), await unknownAnswer(path));
    assert.deepEqual(await agentRows(turn1.id), before[turn1.id], 'a turn stays while its thread can be continued');
    assert.deepEqual(await agentRows(fresh), before[fresh]);
    assert.equal((await fc.getAgentStatus(running)).status, 'processing', 'a running job is never taken');

    // The thread's time comes: the whole thread goes, and is then unknown.
    await q(`UPDATE jobs SET expires_at = now() - interval '1 second' WHERE id = ANY($1::uuid[])`, [[turn1.id, turn2]]);
    await until(async () => ((await agentRows(turn1.id)).runs + (await agentRows(turn2)).runs === 0 ? true : null), 'the sweep to delete the expired thread', WAIT);
    assert.deepEqual(await answer('/v2/agent/threads/{id}', turn1.threadId!), await unknownAnswer('/v2/agent/threads/{id}'));

    releaseAgent();
    await agentDone(running);
  });
});

describe('monitor crawls', () => {
  test("a monitor's crawl is kept until its check collected it; then it goes, and the monitor's history stays", T, async () => {
    const m = await fc.createMonitor({ name: 'retention', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'crawl', url: site.url('/a'), crawlOptions: { limit: 2, crawlEntireDomain: true } }] } as never);
    const runCheck = async () => {
      const started = await fc.runMonitor(m.id);
      return until(async () => {
        const c = await fc.getMonitorCheck(m.id, started.id, { limit: 100 });
        return c.status === 'running' || c.status === 'queued' ? null : c;
      }, 'the check to end', WAIT);
    };
    const first = await runCheck();
    assert.equal(first.status, 'completed', JSON.stringify(first));
    const crawlId = (first.targetResults![0] as { crawlId?: string }).crawlId!;
    assert.ok(crawlId);
    const marker = await crawlOf(fc, '/b');
    await crawlDone(marker);

    // Between its crawl's end and the collection of its pages, a check's target is pending and the
    // crawl's expiry held (finishJob leaves it NULL then): put both back there, ended a day ago, and
    // expire a plain crawl in the same statement.
    const [target] = await q<{ check_id: string; target_id: string; result: Record<string, unknown> }>(
      `UPDATE monitor_check_targets SET status = 'pending' WHERE job_id = $1 RETURNING check_id, target_id, result`, [crawlId]);
    await q(
      `UPDATE jobs SET finished_at = now() - interval '25 hours', expires_at = CASE WHEN id = $1 THEN NULL ELSE now() - interval '1 second' END WHERE id = ANY($2::uuid[])`,
      [crawlId, [crawlId, marker]],
    );
    await until(async () => ((await crawlRows(marker)).job === 0 ? true : null), 'the sweep to delete the plain expired crawl', WAIT);
    assert.equal((await crawlRows(crawlId)).job, 2, 'a crawl its check still has to collect is kept');

    // The check collects it: its expiry is 24 hours from its end, long passed.
    assert.equal(await collectTarget(stack.db.db, { checkId: target!.check_id, targetId: target!.target_id, result: target!.result }), true);
    await until(async () => ((await crawlRows(crawlId)).job === 0 ? true : null), 'the sweep to delete the collected monitor crawl', WAIT);
    assert.deepEqual(await answer('/v2/crawl/{id}', crawlId), await unknownAnswer('/v2/crawl/{id}'));
    // The check keeps its own copy of the pages; the next check compares with the team's page versions.
    const again = await fc.getMonitorCheck(m.id, first.id, { limit: 100 });
    assert.deepEqual(again.pages.map((p) => [p.url, p.status]).sort(), first.pages.map((p) => [p.url, p.status]).sort());
    assert.equal(first.pages.length, 2);
    const second = await runCheck();
    assert.equal(second.status, 'completed', JSON.stringify(second));
    assert.deepEqual(second.pages.map((p) => p.status).sort(), ['same', 'same']);
  });
});
