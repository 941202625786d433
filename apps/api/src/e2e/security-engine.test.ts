import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { entriesOfFile, importEntries } from '@wds/catalog';
import { makeDocxBomb, makeScannedPdf } from '@wds/documents/fixtures';
import { call, html, namespaceFor, startFakeOpenAI, startFixtureSite, startStack, until, type FakeOpenAI, type FakeReply, type FixtureSite, type Stack } from '@wds/test-utils';

// Attacks on the engine of a running stack (issue #38, items 1, 4 and 7), each shown to do no harm:
// 1. users' JSON Schemas and hostile model answers: validation never stalls a process (a plain
//    scrape sent meanwhile answers within 2 s), unusable patterns are a 422, and validation that
//    explodes anyway ends at a deadline as a 422 that Temporal does not retry;
// 4. DOCX zip bombs: two uploads at once grow the worker by well under 1 GB;
// 7. the programs workers start (pdftoppm, tesseract, ffmpeg, ffprobe) see none of the worker's
//    secrets: wrappers on the workers' PATH stop each one until this test has read its
//    /proc/<pid>/environ, then become the real program.
const T = { timeout: 180_000 };
const PLAIN_SCRAPE_MS = 2_000;

/** Values only the worker's environment holds: none may reach a child program. */
const SECRETS = {
  OPENAI_API_KEY: 'sk-canary-openai-5f1e2d',
  WDS_FILE_SIGNING_SECRET: 'canary-signing-secret-8c3b',
  WDS_API_KEY: 'canary-bootstrap-key-77aa',
  WDS_SMTP_URL: 'smtp://canary:smtp-password-91d0@127.0.0.1:2525',
};
const TOOLS = ['pdftoppm', 'tesseract', 'ffmpeg', 'ffprobe'];

const dir = mkdtempSync(join(tmpdir(), 'wds-sec-engine-'));
const binDir = join(dir, 'bin');
const runDir = join(dir, 'run');
let stack: Stack;
let site: FixtureSite;
let model: FakeOpenAI;
let fc: Firecrawl;
let answer: () => FakeReply = () => ({ content: {} });
/** What each wrapped program found in its environment, read from /proc/<pid>/environ while it waited. */
const seen: { tool: string; pid: number; env: Record<string, string> }[] = [];
let watcher: NodeJS.Timeout | undefined;

const page = (title: string, body: string) => `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;

/** A wrapper that announces its pid, waits (at most 10 s) until the test has read its environment, then execs the real program. */
function installWrappers(): void {
  execFileSync('mkdir', ['-p', binDir, runDir]);
  for (const tool of TOOLS) {
    const real = execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
    const file = join(binDir, tool);
    writeFileSync(
      file,
      `#!/bin/sh\necho $$ > '${runDir}/${tool}.'$$'.pid'\nn=0\nwhile [ ! -e '${runDir}/${tool}.'$$'.seen' ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done\nexec '${real}' "$@"\n`,
    );
    chmodSync(file, 0o755);
  }
  watcher = setInterval(() => {
    for (const f of readdirSync(runDir).filter((n) => n.endsWith('.pid'))) {
      const [tool, pid] = f.split('.');
      const done = join(runDir, `${tool}.${pid}.seen`);
      if (existsSync(done)) continue;
      try {
        const raw = readFileSync(`/proc/${pid}/environ`, 'utf8');
        const env = Object.fromEntries(raw.split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
        seen.push({ tool: tool!, pid: Number(pid), env });
      } finally {
        writeFileSync(done, '');
      }
    }
  }, 20);
}

/** Scrapes /ok (never cached) and says how long the answer took. */
async function timedScrape(): Promise<number> {
  const t = Date.now();
  const d = await fc.scrape(site.url('/ok'), { formats: ['markdown'], maxAge: 0 });
  assert.match(d.markdown ?? '', /Plain text for readers/);
  return Date.now() - t;
}

/** Peak RSS of a process since the last reset, in MB, and the reset (Linux clear_refs 5). */
const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

async function upload(data: Buffer, name: string, options?: unknown) {
  const form = new FormData();
  if (options !== undefined) form.append('options', JSON.stringify(options));
  form.append('file', new Blob([data]), name);
  return call(stack, 'POST', '/v2/parse', form);
}

before(async () => {
  installWrappers();
  const media = join(dir, 'tone.ogg');
  execFileSync('/usr/bin/ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'libvorbis', media]);
  const tone = readFileSync(media);
  site = await startFixtureSite({
    '/ok': html(page('OK', `<p>${'Plain text for readers, served over HTTP. '.repeat(20)}</p>`)),
    '/product': html(page('Kettle', '<p>A blue kettle for 49.90 EUR.</p>')),
    '/audio-page': html(page('Podcast', '<p>Listen.</p><audio controls src="/media/tone.ogg"></audio>')),
    '/media/tone.ogg': (_q, r) => void r.writeHead(200, { 'content-type': 'audio/ogg' }).end(tone),
  });
  model = await startFakeOpenAI({ apiKey: SECRETS.OPENAI_API_KEY, handler: () => answer() });
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: { ...model.env, ...SECRETS, PATH: `${binDir}:${process.env.PATH}`, WDS_DATA_DIR: join(dir, 'data') },
  });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
  await timedScrape(); // warm: connections, threads
}, T);

after(async () => {
  clearInterval(watcher);
  await stack?.stop();
  await site?.close();
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
}, T);

describe('item 1: users’ JSON Schemas never stall a process', () => {
  test('pattern (a+)+$ with a model answer of 34 a’s and "!": a plain scrape meanwhile answers within 2 s; the job is 422 LLM_CANNOT_CONFORM', T, async () => {
    // A backtracking RegExp needs 2^34 steps for this answer (minutes), and Temporal retried the stalled activity.
    const schema = { type: 'object', properties: { v: { type: 'string', pattern: '^(a+)+$' } }, required: ['v'] };
    answer = () => ({ content: { v: `${'a'.repeat(34)}!` } });
    model.reset();
    const hostile = call(stack, 'POST', '/v2/scrape', { url: site.url('/product'), formats: [{ type: 'json', schema }], maxAge: 0 });
    await until(() => model.chatRequests().length >= 1, 'the model answered', { timeoutMs: 60_000 });
    await new Promise((r) => setTimeout(r, 200)); // the answer reaches the worker and is validated
    const ms = await timedScrape();
    assert.ok(ms < PLAIN_SCRAPE_MS, `a plain scrape during the validation took ${ms} ms`);
    const r = await hostile;
    assert.equal(r.status, 422, r.text);
    assert.deepEqual([r.json.success, r.json.code], [false, 'LLM_CANNOT_CONFORM']);
    assert.match(JSON.stringify(r.json.details), /must match pattern/);
    assert.equal(model.chatRequests().length, 2, 'one answer and one repair turn, no Temporal retry');
  });

  test('a pattern the linear-time engine cannot run is a 422 LLM_INVALID_SCHEMA naming it, before anything is fetched or asked', T, async () => {
    model.reset();
    const hits = site.hits('/product');
    const bodies = [
      { path: '/v2/scrape', body: { url: site.url('/product'), formats: [{ type: 'json', schema: { type: 'object', properties: { v: { type: 'string', pattern: '^(\\w+)\\1$' } } } }] } },
      { path: '/v2/extract', body: { urls: [site.url('/product')], schema: { type: 'object', patternProperties: { '(?=x)': { type: 'string' } } } } },
      { path: '/v2/agent', body: { prompt: 'Find the price', schema: { type: 'object', properties: { p: { type: 'string', pattern: '(?<!a)b' } } } } },
    ];
    for (const { path, body } of bodies) {
      const r = await call(stack, 'POST', path, body);
      assert.equal(r.status, 422, `${path}: ${r.text}`);
      assert.equal(r.json.success, false);
      assert.equal(r.json.code, 'LLM_INVALID_SCHEMA');
      assert.equal(typeof r.json.error, 'string');
      assert.match(r.json.error, /is not a supported regular expression/);
      assert.ok(Array.isArray(r.json.details.errors), r.text);
    }
    assert.equal(site.hits('/product'), hits);
    assert.equal(model.chatRequests().length, 0);
  });

  test('validation that explodes without any pattern (anyOf over a recursive $ref): a plain scrape meanwhile answers within 2 s; the job ends at the schema thread’s deadline or memory bound as a 422, not retried', T, async () => {
    // Both branches fail only at the innermost item: 2^40 paths through 40 nested arrays.
    const schema = { $ref: '#/$defs/n', $defs: { n: { anyOf: [{ type: 'array', items: { $ref: '#/$defs/n' } }, { type: 'array', items: { $ref: '#/$defs/n' } }] } } };
    let nested: unknown = 1;
    for (let i = 0; i < 40; i++) nested = [nested];
    answer = () => ({ content: { result: nested } });
    model.reset();
    const hostile = call(stack, 'POST', '/v2/scrape', { url: site.url('/product'), formats: [{ type: 'json', schema }], maxAge: 0 });
    await until(() => model.chatRequests().length >= 1, 'the model answered', { timeoutMs: 60_000 });
    await new Promise((r) => setTimeout(r, 500));
    const ms = await timedScrape();
    assert.ok(ms < PLAIN_SCRAPE_MS, `a plain scrape during the validation took ${ms} ms`);
    const r = await hostile;
    assert.equal(r.status, 422, r.text);
    assert.deepEqual([r.json.success, r.json.code], [false, 'LLM_INVALID_SCHEMA']);
    // The deadline or the thread's heap, whichever the host meets first (a fast one runs out of heap).
    assert.match(r.json.error, /validating against the schema (took longer than \d+ ms|needs more than \d+ MB)/);
    assert.equal(model.chatRequests().length, 1, 'a 422 is not retried into the same stall');
    assert.ok((await timedScrape()) < PLAIN_SCRAPE_MS * 5, 'the worker still serves');
  });

  test('an operator catalog schema with (a+)+$ and a caller’s 40 a’s and "!": the API answers 400 invalid_options and keeps serving', T, async () => {
    const entries = await entriesOfFile({
      providers: [{
        id: 'canary', name: 'Codes', endpoint: 'http://127.0.0.1:9/never-called',
        capabilities: [{ id: 'code/lookup', name: 'Code lookup', description: 'Looks a code up.', creditsCost: 1, options: { type: 'object', required: ['code'], properties: { code: { type: 'string', pattern: '^(a+)+$' } } } }],
      }],
    });
    await importEntries(stack.db.db, entries);
    const team = await stack.newTeam({ flags: { catalog: true } });
    const hostile = call({ url: stack.url, apiKey: team.apiKey }, 'POST', '/v2/scrape', { catalog: [{ provider: 'canary', capability: 'code/lookup', options: { code: `${'a'.repeat(40)}!` } }] });
    const ms = await timedScrape();
    assert.ok(ms < PLAIN_SCRAPE_MS, `a plain scrape beside the catalog request took ${ms} ms`);
    const r = await hostile;
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.details[0].code, 'invalid_options');
    assert.match(r.json.details[0].message, /must match pattern/);
  });
});

describe('item 4: a DOCX zip bomb grows the worker by a bounded amount', () => {
  test('two 1 GiB bombs (about 1 MB each) uploaded at once: both 422 DOCX_TOO_COMPLEX, the worker’s RSS grows by well under 1 GB', T, async (t) => {
    const bomb = makeDocxBomb(1024);
    assert.ok(bomb.length < 1.2e6, `${bomb.length} bytes`);
    const pid = stack.worker.child.pid!;
    const base = rssMb(pid);
    resetPeak(pid);
    let sampled = base;
    const sampler = setInterval(() => (sampled = Math.max(sampled, rssMb(pid))), 25);
    const answers = await Promise.all([upload(bomb, 'a.docx'), upload(bomb, 'b.docx')]).finally(() => clearInterval(sampler));
    const growth = Math.max(sampled, peakRssMb(pid)) - base;
    t.diagnostic(`worker RSS ${Math.round(base)} MB, grew by ${Math.round(growth)} MB at most`);
    // Before: each upload inflated its GiB into ArrayBuffers outside the DOCX thread's heap cap.
    assert.ok(growth < 1024, `the worker grew by ${Math.round(growth)} MB`);
    for (const r of answers) {
      assert.equal(r.status, 422, r.text);
      assert.deepEqual([r.json.success, r.json.code], [false, 'DOCX_TOO_COMPLEX']);
      assert.match(r.json.error, /inflates to more than 64 MB/);
    }
  });
});

describe('item 7: programs the workers start get an allow-listed environment', () => {
  test('pdftoppm, tesseract, ffmpeg and ffprobe, read from /proc/<pid>/environ while they run: no secret, only allow-listed names', T, async () => {
    await stack.addWorker({ WDS_WORKER_QUEUES: 'wds-media', WDS_PUBLIC_URL: stack.url });
    const scanned = await makeScannedPdf(['Invoice Summary', 'Total amount due 4250 EUR']);
    const parsed = await upload(scanned, 'scan.pdf', { parsers: [{ type: 'pdf', mode: 'ocr' }] });
    assert.equal(parsed.status, 200, parsed.text);
    assert.match(parsed.json.data.markdown, /Invoice/);
    const audio = await call(stack, 'POST', '/v2/scrape', { url: site.url('/audio-page'), formats: ['markdown', 'audio'], maxAge: 0 });
    assert.equal(audio.status, 200, audio.text);
    assert.ok(audio.json.data.audio, audio.text);

    await until(() => TOOLS.every((t) => seen.some((s) => s.tool === t)), `every program was seen (${[...new Set(seen.map((s) => s.tool))].join(', ')})`, { timeoutMs: 30_000 });
    const allowed = new Set(['PATH', 'HOME', 'TMPDIR', 'TZ', 'LANG', 'LANGUAGE', 'TESSDATA_PREFIX', 'OMP_THREAD_LIMIT']);
    for (const { tool, pid, env } of seen) {
      const names = Object.keys(env);
      assert.deepEqual(names.filter((n) => !allowed.has(n) && !n.startsWith('LC_')), [], `${tool} (${pid}) has ${names.join(' ')}`);
      const raw = Object.values(env).join('\n');
      for (const [name, value] of Object.entries({ ...SECRETS, DATABASE_URL: stack.env.DATABASE_URL! })) {
        assert.ok(!raw.includes(value), `${tool} (${pid}) holds ${name}`);
      }
      assert.ok(env.PATH?.startsWith(binDir), `${tool} found its programs on the worker's PATH`);
    }
  });
});
