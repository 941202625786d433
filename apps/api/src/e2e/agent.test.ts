import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { jobCreditBalance } from '@wds/db';
import {
  call,
  html,
  namespaceFor,
  promptText,
  startFakeOpenAI,
  startFixtureSite,
  startStack,
  agentRunTag,
  agentStepOf,
  type AgentScript,
  type FakeOpenAI,
  type FakeReply,
  toolCall as tool,
  type FixtureSite,
  type Stack,
  until,
} from '@wds/test-utils';

// Agent jobs through the official JS SDK (raw HTTP for the error cases) against the real stack:
// a scripted OpenAI-compatible model chooses the tools, which run over local fixture pages and a
// local SearXNG-speaking search backend.
let stack: Stack;
let site: FixtureSite;
let model: FakeOpenAI;
let fc: Firecrawl;
const dataDir = mkdtempSync(join(tmpdir(), 'wds-agent-e2e-'));

const PAGE_A = `<html><head><title>Blue Kettle</title></head><body><main><h1>Blue Kettle</h1><p>Price: 49.90 EUR. Boils 1.7 litres.</p></main></body></html>`;
const PAGE_B = `<html><head><title>Red Toaster</title></head><body><main><h1>Red Toaster</h1><p>Price: 29.00 EUR. Two slots.</p></main></body></html>`;

/**
 * Scripts by tag: the user's prompt starts with `[tag]`; the step is the number of assistant
 * turns the request carries, plus one. A script answers each step of that run.
 */
const scripts = new Map<string, AgentScript>();
const requestsOf = (tag: string) => model.chatRequests().filter((r) => agentRunTag(r) === tag);

const hooks: Record<string, unknown>[] = [];
type TraceEvent = { type: string; producerSequence: number; agent: { id: string; role: string; parentId?: string }; [k: string]: unknown };

before(async () => {
  model = await startFakeOpenAI({
    handler: (r) => {
      // Calls without tools are the extract tool's (extractJson over a stored page).
      if (!r.tools?.length) return { content: { name: 'Blue Kettle', price: 49.9 } };
      const s = scripts.get(agentRunTag(r));
      return s ? s(agentStepOf(r), r) : { content: 'no script' };
    },
  });
  site = await startFixtureSite({
    '/products/a': html(PAGE_A),
    '/products/b': html(PAGE_B),
    '/notes/glacier': html('<html><head><title>Field notes</title></head><body><main><h1>Field notes</h1><p>The quorvandite sample was found on the glacier.</p></main></body></html>'),
  });
  site.route('/hook', (req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hooks.push(JSON.parse(body) as Record<string, unknown>);
      res.writeHead(200).end('ok');
    });
  });
  // SearXNG's JSON API, as the agent's search tool calls it.
  site.route('/search', (req, res) => {
    const q = new URL(req.url ?? '/', site.origin).searchParams;
    assert.equal(q.get('format'), 'json');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      query: q.get('q'),
      results: [
        { url: site.url('/products/a'), title: 'Blue Kettle', content: 'A kettle' },
        { url: site.url('/products/b'), title: 'Red Toaster', content: 'A toaster' },
      ],
    }));
  });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: {
      ...model.env,
      SEARXNG_ENDPOINT: site.origin,
      // The team's stored pages first, then SearXNG: the agent searches what POST /v2/search answers from.
      WDS_SEARCH_PROVIDER: 'both',
      WDS_LLM_CONCURRENCY: '8',
      WDS_DATA_DIR: dataDir,
      WDS_FILE_SIGNING_SECRET: 'agent-e2e-signing-secret',
    },
  });
  // A browser worker, for the scrape tool's pages with actions (wds-browser).
  await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_PUBLIC_URL: stack.url, WDS_BROWSER_PAGES: '1', WDS_DATA_DIR: dataDir, WDS_FILE_SIGNING_SECRET: 'agent-e2e-signing-secret' });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});

after(async () => {
  await stack?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  await site?.close();
  await model?.close();
});

async function finished(id: string, timeoutMs = 60_000) {
  return until(async () => {
    const s = await fc.getAgentStatus(id);
    return s.status === 'processing' ? null : s;
  }, `agent ${id} to finish`, { timeoutMs, everyMs: 250 });
}

async function traceOf(id: string): Promise<TraceEvent[]> {
  const t = await fc.getAgentTrace(id);
  assert.equal(t.success, true);
  return t.events as unknown as TraceEvent[];
}

/** Each agent's events are numbered 1, 2, 3… without gaps or repeats. */
function assertGapFree(events: TraceEvent[]) {
  const byAgent = new Map<string, number[]>();
  for (const e of events) byAgent.set(e.agent.id, [...(byAgent.get(e.agent.id) ?? []), e.producerSequence]);
  for (const [agent, seqs] of byAgent) {
    assert.deepEqual([...seqs].sort((a, b) => a - b), seqs.map((_, i) => i + 1), `events of agent ${agent} are gap-free`);
  }
}

const schema = {
  type: 'object',
  properties: { products: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, price: { type: 'number' } }, required: ['name', 'price'] } } },
  required: ['products'],
};
const PRODUCTS = { products: [{ name: 'Blue Kettle', price: 49.9 }, { name: 'Red Toaster', price: 29 }] };

describe('agent jobs', () => {
  test('searches, scrapes two pages and returns schema-valid data (one repair turn)', async () => {
    scripts.set('shop', (step, r) => {
      if (step === 1) return { toolCalls: [tool('search', { query: 'kitchen products' }, 'c-search')] };
      if (step === 2) {
        assert.match(promptText(r), /Blue Kettle/, 'the search results reach the model');
        return { toolCalls: [tool('scrape', { url: site.url('/products/a') }, 'c-a'), tool('scrape', { url: site.url('/products/b') }, 'c-b')] };
      }
      if (step === 3) {
        assert.match(promptText(r), /49\.90 EUR/, 'page A reached the model');
        assert.match(promptText(r), /Two slots/, 'page B reached the model');
        // Wrong shape: the schema check sends it back once.
        return { toolCalls: [tool('finish', { data: { products: [{ name: 'Blue Kettle' }] } }, 'c-bad')] };
      }
      assert.match(promptText(r), /does not match the required JSON Schema/);
      return { toolCalls: [tool('finish', { data: PRODUCTS, message: 'Found two products.' }, 'c-done')] };
    });
    const started = await fc.startAgent({
      prompt: '[shop] List the kitchen products with their prices',
      schema,
      model: 'spark-1-mini',
      webhook: { url: site.url('/hook'), events: ['started', 'completed'], metadata: { ref: 'shop' } },
    });
    assert.equal(started.success, true);
    assert.match(started.id, /^[0-9a-f-]{36}$/);
    const s = await finished(started.id);
    assert.equal(s.status, 'completed', JSON.stringify(s));
    assert.deepEqual(s.data, PRODUCTS);
    assert.equal(s.message, 'Found two products.');
    assert.equal(s.model, 'spark-1-mini');
    assert.ok(Number.isInteger(s.creditsUsed) && s.creditsUsed! > 0, `creditsUsed ${s.creditsUsed}`);
    assert.ok(Date.parse(s.expiresAt) > Date.now());
    assert.equal(requestsOf('shop').length, 4);

    // Billed once: the ledger's charges are the status's creditsUsed, nothing stays reserved.
    const bal = await jobCreditBalance(stack.db.db, started.id);
    assert.deepEqual(bal, { used: s.creditsUsed, reserved: 0 });

    const events = await traceOf(started.id);
    assertGapFree(events);
    assert.equal(events[0]!.type, 'run.started');
    for (const e of events) {
      assert.equal(e.schemaVersion, 1);
      assert.equal(e.runId, started.id);
      assert.equal(e.agent.role, 'orchestrator');
      assert.match(String(e.eventId), /^[0-9a-f-]{36}$/);
    }
    const finishedCalls = events.filter((e) => e.type === 'tool_call.finished').map((e) => `${e.toolName}:${e.toolCallId}`);
    assert.deepEqual(finishedCalls.sort(), ['finish:c-bad', 'finish:c-done', 'scrape:c-a', 'scrape:c-b', 'search:c-search']);
    const end = events.at(-1)!;
    assert.equal(end.type, 'run.finished');
    assert.equal(end.outcome, 'succeeded');
    // Every page read is an artifact with a snapshot retrievable by id (its body a JSON string of the page).
    const pages = events.filter((e) => e.type === 'artifact.updated' && (e.artifact as { kind: string }).kind === 'markdown');
    assert.equal(pages.length, 2);
    const snap = await fc.getAgentSnapshot(started.id, (pages[0]!.artifact as { snapshotId: string }).snapshotId);
    assert.equal(snap.success, true);
    assert.equal(typeof snap.snapshot, 'string');
    assert.match(snap.snapshot!, /Blue Kettle|Red Toaster/);
    const result = events.filter((e) => e.type === 'artifact.updated' && (e.artifact as { artifactId: string }).artifactId === 'result');
    assert.equal(result.length, 1);
    const final = await fc.getAgentSnapshot(started.id, (result[0]!.artifact as { snapshotId: string }).snapshotId);
    assert.deepEqual(JSON.parse(final.snapshot!), PRODUCTS);

    // Webhooks: short event names subscribed to, dotted types, the data on completion.
    const done = await until(() => hooks.find((h) => h.id === started.id && h.type === 'agent.completed') ?? null, 'the completed webhook');
    assert.deepEqual(done.data, PRODUCTS);
    assert.deepEqual(done.metadata, { ref: 'shop' });
    assert.deepEqual(hooks.filter((h) => h.id === started.id).map((h) => h.type).sort(), ['agent.completed', 'agent.started']);

    // The list shows it, newest first, and the thread has its one turn.
    const list = await fc.listAgents();
    assert.ok(list.agents?.some((a) => a.id === started.id && a.status === 'completed' && a.origin.startsWith('js-sdk')));
    const thread = await fc.getAgentThread(started.threadId!, { includeData: true });
    assert.equal(thread.thread?.runs.length, 1);
    assert.equal(thread.thread?.runs[0]!.status, 'succeeded');
    assert.deepEqual(thread.thread?.runs[0]!.data, PRODUCTS);
  });

  test('a scrape with browser actions runs on the browser worker', async () => {
    const script = "document.querySelector('h1').textContent = 'Changed by an action'";
    scripts.set('act', (step, r) => {
      if (step === 1) return { toolCalls: [tool('scrape', { url: site.url('/products/a'), actions: [{ type: 'executeJavascript', script }] }, 'c-act')] };
      assert.match(promptText(r), /Changed by an action/, 'the page as the action left it reached the model');
      return { toolCalls: [tool('finish', { data: { ok: true } }, 'c-fin')] };
    });
    const { id } = await fc.startAgent({ prompt: '[act] Click around', urls: [site.url('/products/a')], strictConstrainToURLs: true });
    const s = await finished(id, 90_000);
    assert.equal(s.status, 'completed', JSON.stringify(s));
    assert.equal(requestsOf('act').length, 2);
    const tools = (requestsOf('act')[0]!.tools ?? []).map((t) => t.function.name);
    assert.ok(!tools.includes('search'), 'strictConstrainToURLs: no search tool');
  });

  test('extract reads a page this job scraped, by its pageId', async () => {
    let pageId = '';
    scripts.set('ext', (step, r) => {
      if (step === 1) return { toolCalls: [tool('scrape', { url: site.url('/products/a') }, 'c-page')] };
      if (step === 2) {
        pageId = /pageId: ([0-9a-f-]{36})/.exec(promptText(r))![1]!;
        return { toolCalls: [tool('extract', { pageId, prompt: 'The product name and price' }, 'c-ext')] };
      }
      assert.match(promptText(r), /"price":49\.9/, 'the extraction reached the model');
      return { toolCalls: [tool('finish', { data: { name: 'Blue Kettle', price: 49.9 } }, 'c-fin')] };
    });
    const { id } = await fc.startAgent({ prompt: '[ext] Extract the kettle' });
    const s = await finished(id);
    assert.equal(s.status, 'completed', JSON.stringify(s));
    const extractCall = model.chatRequests().find((r) => !r.tools?.length && promptText(r).includes('The product name and price'));
    assert.ok(extractCall, 'the extract tool called the model');
    assert.match(promptText(extractCall), /49\.90 EUR/, 'with the stored page');
    const snap = (await traceOf(id)).find((e) => e.type === 'artifact.updated' && (e.artifact as { kind: string }).kind === 'json');
    assert.equal((snap!.artifact as { artifactId: string }).artifactId, `extract-${pageId.slice(0, 8)}`);
  });

  test('strictConstrainToURLs: a URL outside the list is refused to the model', async () => {
    scripts.set('strict', (step, r) => {
      if (step === 1) return { toolCalls: [tool('scrape', { url: site.url('/products/b') }, 'c-out')] };
      assert.match(promptText(r), /outside the URLs this task is limited to/);
      return { toolCalls: [tool('finish', { data: { ok: true } }, 'c-fin')] };
    });
    const hits = site.hits('/products/b');
    const { id } = await fc.startAgent({ prompt: '[strict] Only page A', urls: [site.url('/products/a')], strictConstrainToURLs: true });
    const s = await finished(id);
    assert.equal(s.status, 'completed', JSON.stringify(s));
    assert.equal(site.hits('/products/b'), hits, 'the page outside the list was never fetched');
    const err = (await traceOf(id)).find((e) => e.type === 'error.occurred');
    assert.equal((err?.error as { source: string }).source, 'tool');
  });

  test('cancel while running: cancelling, 409 twice, failed with code cancelled, 409 after the end', async () => {
    scripts.set('slow', () => ({ delayMs: 8_000, toolCalls: [tool('finish', { data: { late: true } })] }));
    const { id } = await fc.startAgent({ prompt: '[slow] Take your time' });
    await until(() => requestsOf('slow').length > 0 || null, 'the first model step to start');
    assert.equal(await fc.cancelAgent(id), true);
    const during = await fc.getAgentStatus(id);
    assert.equal(during.status, 'processing');
    const again = await call(stack, 'DELETE', `/v2/agent/${id}`);
    assert.equal(again.status, 409);
    assert.equal(again.json.error, 'Agent is already cancelled');
    const again2 = await call(stack, 'DELETE', `/v2/agent/${id}`);
    assert.equal(again2.status, 409);
    assert.equal(again2.json.error, 'Agent is already cancelled');

    const s = await finished(id, 30_000);
    assert.equal(s.status, 'failed');
    assert.match(s.error ?? '', /cancel/i);
    assert.equal(s.data, undefined);
    assert.equal(s.creditsUsed, 0);
    assert.deepEqual(await jobCreditBalance(stack.db.db, id), { used: 0, reserved: 0 });
    const events = await traceOf(id);
    assertGapFree(events);
    assert.ok(events.some((e) => e.type === 'run.cancel_requested' && e.reason === 'user'));
    const end = events.find((e) => e.type === 'run.finished')!;
    assert.equal(end.outcome, 'cancelled');
    assert.deepEqual(end.error, { code: 'cancelled', source: 'system', retryable: false, message: s.error });
    assert.equal(end.retryable, false, 'the terminal event carries retryable beside its error');
    const late = await call(stack, 'DELETE', `/v2/agent/${id}`);
    assert.equal(late.status, 409);
    assert.equal(late.json.error, 'Agent already finished');
  });

  test('maxCredits 1: failed, no data, creditsUsed 0, trace outcome credit_limit_reached', async () => {
    scripts.set('cheap', () => ({ toolCalls: [tool('finish', { data: { x: 1 } })] }));
    const { id } = await fc.startAgent({ prompt: '[cheap] Do a lot', maxCredits: 1 });
    const s = await finished(id);
    assert.equal(s.status, 'failed');
    assert.equal(s.data, undefined);
    assert.equal(s.creditsUsed, 0);
    assert.match(s.error ?? '', /credit limit/i);
    assert.equal(requestsOf('cheap').length, 0, 'the step that would cross the cap never calls the model');
    const events = await traceOf(id);
    const end = events.find((e) => e.type === 'run.finished')!;
    assert.equal(end.outcome, 'credit_limit_reached');
    assert.equal((end.error as { code: string }).code, 'credit_limit_reached');
    assert.deepEqual(await jobCreditBalance(stack.db.db, id), { used: 0, reserved: 0 });
  });

  test('maxCredits stops a run with results in hand: failed, unbilled, and no data (what it saved is not served)', async () => {
    scripts.set('thrifty', (step) => ({ toolCalls: [tool('save_result', { data: { saved: step } }, `c-${step}`)] }));
    // A step reserves for the longest reply (4,096 tokens: 5+ credits) and keeps only what it
    // spent (1 credit here), so 12 credits carry several steps, not two.
    const { id } = await fc.startAgent({ prompt: '[thrifty] Save as you go', maxCredits: 12 });
    const s = await finished(id);
    assert.equal(s.status, 'failed');
    assert.match(s.error ?? '', /credit limit/i);
    assert.equal(s.creditsUsed, 0);
    const steps = requestsOf('thrifty').length;
    assert.ok(steps >= 3, `steps run: ${steps}`);
    assert.equal(s.data, undefined);
    const end = (await traceOf(id)).find((e) => e.type === 'run.finished')!;
    assert.equal(end.outcome, 'credit_limit_reached');
    assert.deepEqual(await jobCreditBalance(stack.db.db, id), { used: 0, reserved: 0 });
  });

  test('a sub-agent outlived by its parent stops with parent_finished', async () => {
    scripts.set('parent', (step) => {
      if (step === 1) return { toolCalls: [tool('spawn_subagent', { prompt: '[child] Research forever' }, 'c-spawn')] };
      return { toolCalls: [tool('finish', { data: { done: true } }, 'c-fin')] };
    });
    scripts.set('child', () => ({ delayMs: 1_500, toolCalls: [tool('save_result', { data: { partial: true } })] }));
    const { id } = await fc.startAgent({ prompt: '[parent] Delegate and leave' });
    const s = await finished(id);
    assert.equal(s.status, 'completed');
    assert.deepEqual(s.data, { done: true });
    const childEnd = await until(async () => {
      const ev = await traceOf(id);
      return ev.find((e) => e.type === 'agent.finished' && e.agent.role === 'subagent') ?? null;
    }, 'the sub-agent to stop', { timeoutMs: 30_000 });
    assert.equal(childEnd.agent.parentId, id);
    assert.equal((childEnd.error as { code: string }).code, 'parent_finished');
    assertGapFree(await traceOf(id));
    assert.equal((await jobCreditBalance(stack.db.db, id)).reserved, 0, 'nothing stays reserved');
  });

  test('a sub-agent waited for: its result comes back to the parent, its trace is under the job', async () => {
    scripts.set('boss', (step, r) => {
      if (step === 1) return { toolCalls: [tool('spawn_subagent', { prompt: '[worker] Read page B', urls: [site.url('/products/b')] }, 'c-spawn')] };
      if (step === 2) return { toolCalls: [tool('wait_subagents', {}, 'c-wait')] };
      assert.match(promptText(r), /Red Toaster/, "the sub-agent's result reached the parent");
      return { toolCalls: [tool('finish', { data: { fromChild: 'Red Toaster' } }, 'c-fin')] };
    });
    scripts.set('worker', (step) => {
      if (step === 1) return { toolCalls: [tool('scrape', { url: site.url('/products/b') }, 'w-scrape')] };
      return { toolCalls: [tool('finish', { data: { name: 'Red Toaster', price: 29 } }, 'w-fin')] };
    });
    const { id } = await fc.startAgent({ prompt: '[boss] Delegate and wait' });
    const s = await finished(id);
    assert.equal(s.status, 'completed', JSON.stringify(s));
    assert.deepEqual(s.data, { fromChild: 'Red Toaster' });
    const events = await traceOf(id);
    assertGapFree(events);
    const child = events.filter((e) => e.agent.role === 'subagent');
    assert.ok(child.some((e) => e.type === 'agent.started'));
    assert.ok(child.some((e) => e.type === 'agent.finished' && e.outcome === 'succeeded'));
    assert.ok(child.every((e) => e.agent.parentId === id));
    // The sub-agent's model step and scrape are billed to the job.
    const bal = await jobCreditBalance(stack.db.db, id);
    assert.deepEqual(bal, { used: s.creditsUsed, reserved: 0 });
    assert.ok(s.creditsUsed! >= 5, `creditsUsed ${s.creditsUsed}`);
  });

  test('a thread: the second turn is told the first', async () => {
    scripts.set('turn1', () => ({ toolCalls: [tool('finish', { data: { color: 'blue' } })] }));
    const first = await fc.startAgent({ prompt: '[turn1] What color is the kettle?' });
    await finished(first.id);
    scripts.set('turn2', (_step, r) => {
      assert.match(promptText(r), /Turn 1 asked: \[turn1\] What color is the kettle\?/);
      assert.match(promptText(r), /"color":"blue"/);
      return { toolCalls: [tool('finish', { data: { again: 'blue' } })] };
    });
    const second = await fc.startAgent({ prompt: '[turn2] And again?', threadId: first.threadId });
    assert.equal(second.threadId, first.threadId);
    assert.equal(second.threadTurn, 2);
    const s = await finished(second.id);
    assert.equal(s.status, 'completed', JSON.stringify(s));
    const thread = await fc.getAgentThread(first.threadId!);
    assert.deepEqual(thread.thread?.runs.map((r) => r.turn), [1, 2]);
    assert.equal(thread.thread?.status, 'idle');
  });

  test('a model refusal ends the run refused', async () => {
    scripts.set('bad', () => ({ content: '', refusal: 'I cannot help with that request.' }));
    const { id } = await fc.startAgent({ prompt: '[bad] Something harmful' });
    const s = await finished(id);
    assert.equal(s.status, 'failed');
    // Unbilled, so the model's words are not served: the reason stays in the transcript.
    assert.equal(s.error, 'The agent refused the task.');
    assert.equal(s.creditsUsed, 0);
    const end = (await traceOf(id)).find((e) => e.type === 'run.finished')!;
    assert.equal(end.outcome, 'refused');
    assert.equal((end.error as { code: string; retryable: boolean }).code, 'refused');
    assert.equal((end.error as { retryable: boolean }).retryable, false);
  });

  test('invalid ids are 400, unknown and other teams\' are 404', async () => {
    const bad = await call(stack, 'GET', '/v2/agent/not-a-uuid');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error, 'Invalid job ID format. Job ID must be a valid UUID.');
    const unknown = await call(stack, 'GET', '/v2/agent/00000000-0000-4000-8000-000000000000');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error, 'Agent job not found');
    for (const path of ['/trace', '/snapshots/00000000-0000-4000-8000-000000000000']) {
      const r = await call(stack, 'GET', `/v2/agent/00000000-0000-4000-8000-000000000000${path}`);
      assert.equal(r.status, 404, path);
    }
    for (const before of ['abc', '-1', '1e20', '99999999999999999999', '1.5']) {
      const r = await call(stack, 'GET', `/v2/agent?before=${before}`);
      assert.equal(r.status, 400, before);
    }
    const del = await call(stack, 'DELETE', '/v2/agent/00000000-0000-4000-8000-000000000000');
    assert.equal(del.status, 404);

    scripts.set('mine', () => ({ toolCalls: [tool('finish', { data: { a: 1 } })] }));
    const { id } = await fc.startAgent({ prompt: '[mine] quick' });
    await finished(id);
    const badSnap = await call(stack, 'GET', `/v2/agent/${id}/snapshots/nope`);
    assert.equal(badSnap.status, 400);
    assert.equal(badSnap.json.error, 'Invalid snapshot ID');
    const noSnap = await call(stack, 'GET', `/v2/agent/${id}/snapshots/00000000-0000-4000-8000-000000000000`);
    assert.equal(noSnap.status, 404);
    assert.equal(noSnap.json.error, 'Snapshot not found');

    const other = await stack.newTeam();
    const theirs = await call({ url: stack.url, apiKey: other.apiKey }, 'GET', `/v2/agent/${id}`);
    assert.equal(theirs.status, 404);
    assert.equal(theirs.json.error, 'Agent job not found');
    const theirCancel = await call({ url: stack.url, apiKey: other.apiKey }, 'DELETE', `/v2/agent/${id}`);
    assert.equal(theirCancel.status, 404);
  });

  test('bad requests are 400s; zero-data-retention teams get the spec\'s 400', async () => {
    for (const body of [{}, { prompt: '' }, { prompt: 'x', maxCredits: 0 }, { prompt: 'x', model: 'gpt-9' }, { prompt: 'x', strictConstrainToURLs: true }, { prompt: 'x', surprise: 1 }, { prompt: 'x', urls: ['ftp://a'] }]) {
      const r = await call(stack, 'POST', '/v2/agent', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.json.success, false);
    }
    const badSchema = await call(stack, 'POST', '/v2/agent', { prompt: 'x', schema: { type: 'nonsense' } });
    assert.ok(badSchema.status === 400 || badSchema.status === 422, String(badSchema.status));
    const zdr = await stack.newTeam({ flags: { zeroDataRetention: true } });
    const r = await call({ url: stack.url, apiKey: zdr.apiKey }, 'POST', '/v2/agent', { prompt: 'x' });
    assert.equal(r.status, 400);
    assert.equal(r.json.error, 'Your team has zero data retention enabled. This is not supported on extract.');
  });
});

test('the search tool finds the pages the team stored (the own index), not only the web provider\'s', async () => {
  await fc.scrape(site.url('/notes/glacier'), { formats: ['markdown'] });
  scripts.set('own-index', (step, r) => {
    if (step === 1) return { toolCalls: [tool('search', { query: 'quorvandite' }, 'c-own')] };
    assert.ok(promptText(r).includes(site.url('/notes/glacier')), 'the stored page is a search result');
    return { toolCalls: [tool('finish', { data: { found: true } }, 'c-own-done')] };
  });
  const started = await fc.startAgent({ prompt: '[own-index] Where was the quorvandite sample found?' });
  const s = await finished(started.id);
  assert.equal(s.status, 'completed', JSON.stringify(s));
  assert.deepEqual(s.data, { found: true });
  assert.equal(requestsOf('own-index').length, 2);
});
