import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { html, namespaceFor, promptText, startFakeOpenAI, startFixtureSite, startStack, type FakeChatRequest, type FakeOpenAI, type FakeReply, type FixtureSite, type Stack } from '@wds/test-utils';

// The model work a scrape gets only where an LLM is configured: the redactPII model pass
// (modes accurate/aggressive) and branding's personality, through the JS SDK against the real
// stack (a browser worker for branding) and a local OpenAI-compatible server.
let stack: Stack;
let site: FixtureSite;
let model: FakeOpenAI;
let fc: Firecrawl;

const ABOUT = `<html><head><title>About</title></head><body><main><h1>About us</h1>
<p>The shop was started in a garage by Zorblax Quintavius. Write to anna@example.org.</p>
<p>Order 2024-0815 shipped.</p></main></body></html>`;
const BRAND = `<html><head><title>Spark</title><style>body{background:#fff;color:#222;font-family:Inter,sans-serif}a{color:#e11d48}.b{background:#e11d48;color:#fff;border:0;border-radius:4px}</style></head>
<body><main><h1>Ship faster with Spark</h1><p>The deploy tool for teams who move fast. <a href="/docs">Docs</a></p><button class="b">Start free</button></main></body></html>`;

const kindOf = (r: FakeChatRequest) => {
  const t = promptText(r);
  if (t.includes('Find personal data')) return 'pii';
  if (t.includes('brand personality')) return 'personality';
  return 'json';
};
function reply(r: FakeChatRequest): FakeReply {
  switch (kindOf(r)) {
    case 'pii':
      // One name the detectors cannot know, one value that is not in the page (ignored).
      return { content: { items: [{ type: 'PERSON', text: 'Zorblax Quintavius' }, { type: 'EMAIL', text: 'ghost@nowhere.test' }] } };
    case 'personality':
      return { content: { tone: 'modern', energy: 'high', targetAudience: 'software teams' } };
    default:
      return { content: { founder: 'unknown' } };
  }
}

before(async () => {
  model = await startFakeOpenAI({ handler: reply });
  site = await startFixtureSite({ '/about': html(ABOUT), '/brand': html(BRAND) });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: { ...model.env },
  });
  await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-browser', WDS_PUBLIC_URL: stack.url, WDS_BROWSER_PAGES: '1', ...model.env });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  await model?.close();
});
beforeEach(() => model.reset());

type Doc = { markdown?: string; warning?: string; json?: unknown; branding?: Record<string, unknown>; metadata?: { creditsUsed?: number } };

describe('redactPII model pass', () => {
  test('accurate: the model finds what the detectors miss; it never sees what they removed; 5 credits', async () => {
    const doc = (await fc.scrape(site.url('/about'), { formats: ['markdown'], redactPII: { mode: 'accurate' }, maxAge: 0 })) as Doc;
    assert.match(doc.markdown!, /The shop was started in a garage by <PERSON>\. Write to <EMAIL>\./);
    assert.match(doc.markdown!, /Order 2024-0815 shipped\./);
    assert.equal(doc.warning, undefined);
    assert.equal(doc.metadata?.creditsUsed, 5);
    const calls = model.chatRequests().filter((r) => kindOf(r) === 'pii');
    assert.equal(calls.length, 1);
    assert.ok(!promptText(calls[0]!).includes('anna@example.org'), 'the detectors ran before the model');
  });

  test('json reads the redacted page', async () => {
    const doc = (await fc.scrape(site.url('/about'), { formats: [{ type: 'json', prompt: 'Who founded it?' }], redactPII: { mode: 'aggressive', entities: ['PERSON'] }, maxAge: 0 } as never)) as Doc;
    assert.deepEqual(doc.json, { founder: 'unknown' });
    const json = model.chatRequests().find((r) => kindOf(r) === 'json')!;
    assert.ok(!promptText(json).includes('Zorblax'), 'the json call saw the name');
  });

  test('true and mode fast call no model', async () => {
    for (const redactPII of [true, { mode: 'fast' as const }]) {
      const doc = (await fc.scrape(site.url('/about'), { formats: ['markdown'], redactPII, maxAge: 0 })) as Doc;
      assert.match(doc.markdown!, /Zorblax Quintavius/);
      assert.match(doc.markdown!, /<EMAIL>/);
    }
    assert.equal(model.chatRequests().length, 0);
  });
});

describe('branding personality', () => {
  test('with an LLM configured, branding carries personality', async () => {
    const doc = (await fc.scrape(site.url('/brand'), { formats: ['branding'] })) as Doc;
    const b = doc.branding!;
    assert.deepEqual(b.personality, { tone: 'modern', energy: 'high', targetAudience: 'software teams' });
    assert.equal((b.colors as Record<string, string>).primary, '#E11D48');
    assert.equal(doc.markdown, undefined, 'markdown was built for the model only');
    const call = model.chatRequests().find((r) => kindOf(r) === 'personality')!;
    assert.match(promptText(call), /Ship faster with Spark/);
  });
});
