import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyFetch } from './classify';
import { gitDiff } from './diff';
import { jsonChanges } from './json-diff';
import { canonicalJson, jsonModeKey, markdownHash, normalizeMarkdown } from './normalize';

test('normalization: whitespace churn is no change, and normalizing twice changes nothing', () => {
  const a = '# Pricing\r\n\r\n\r\n\r\nStarter: $9/mo   \nPro: $29/mo\n\n';
  const b = '\n# Pricing\n\nStarter: $9/mo\nPro: $29/mo';
  assert.equal(normalizeMarkdown(a), '# Pricing\n\nStarter: $9/mo\nPro: $29/mo');
  assert.equal(markdownHash(a), markdownHash(b));
  assert.equal(normalizeMarkdown(normalizeMarkdown(a)), normalizeMarkdown(a));
  assert.equal(gitDiff(a, b), null, 'an empty diff is never a change');
  assert.notEqual(markdownHash(a), markdownHash(a.replace('$9', '$12')));
  // Captcha frames change their URL on every load.
  assert.equal(markdownHash('x <iframe src="https://c.test/?t=1"></iframe>'), markdownHash('x <iframe src="https://c.test/?t=2"></iframe>'));
});

test('git-diff: unified hunks with context and parse-diff line numbers, as Firecrawl documents them', () => {
  const prev = ['# Pricing', '', 'Starter: $9/mo', 'Pro: $29/mo', 'a', 'b', 'c', 'd', 'e', 'f', 'Footer'].join('\n');
  const curr = prev.replace('Starter: $9/mo', 'Starter: $12/mo').replace('Footer', 'Footer 2025');
  const d = gitDiff(prev, curr)!;
  assert.ok(d);
  const lines = d.text.split('\n');
  assert.equal(lines[0], '@@ -1,6 +1,6 @@');
  assert.ok(lines.includes('-Starter: $9/mo') && lines.includes('+Starter: $12/mo'));
  assert.ok(lines.includes(' # Pricing'), 'context lines keep a space marker');
  const [file] = d.json.files;
  assert.equal(file!.additions, 2);
  assert.equal(file!.deletions, 2);
  assert.equal(file!.chunks.length, 2, 'changes 8 lines apart are two hunks with 3 lines of context');
  const del = file!.chunks[0]!.changes.find((c) => c.type === 'del')!;
  const add = file!.chunks[0]!.changes.find((c) => c.type === 'add')!;
  assert.deepEqual([del.ln, del.content, del.del], [3, 'Starter: $9/mo', true]);
  assert.deepEqual([add.ln, add.content, add.add], [3, 'Starter: $12/mo', true]);
  const normal = file!.chunks[0]!.changes[0]!;
  assert.deepEqual([normal.type, normal.ln1, normal.ln2, normal.content], ['normal', 1, 1, '# Pricing']);
  assert.equal(file!.chunks[1]!.content, '@@ -8,4 +8,4 @@');
});

test('git-diff: from and to nothing, and a pathological pair stays bounded', () => {
  const added = gitDiff('', 'one\ntwo')!;
  assert.equal(added.text, '@@ -0,0 +1,2 @@\n+one\n+two');
  assert.equal(gitDiff('one', '')!.json.files[0]!.deletions, 1);
  // Two large pages with nothing in common: past the edit bound the diff is one replacement hunk, fast.
  const big = (p: string) => Array.from({ length: 30_000 }, (_, i) => `${p} line ${i}`).join('\n');
  const t0 = Date.now();
  const d = gitDiff(big('old'), big('new'))!;
  assert.ok(Date.now() - t0 < 15_000, `took ${Date.now() - t0} ms`);
  assert.equal(d.json.files[0]!.additions, 30_000);
  assert.equal(d.json.files[0]!.deletions, 30_000);
});

test('json mode: every schema key with previous and current; changed keys compared canonically', () => {
  const schema = { type: 'object', properties: { price: { type: 'string' }, availability: { type: 'string' }, specs: { type: 'object' } } };
  const r = jsonChanges({ price: '$19.99', availability: 'In Stock', specs: { a: 1, b: 2 } }, { price: '$24.99', availability: 'In Stock', specs: { b: 2, a: 1 } }, schema);
  assert.deepEqual(r.json, {
    price: { previous: '$19.99', current: '$24.99' },
    availability: { previous: 'In Stock', current: 'In Stock' },
    specs: { previous: { a: 1, b: 2 }, current: { b: 2, a: 1 } },
  });
  assert.deepEqual(r.changedKeys, ['price']);
  assert.deepEqual(jsonChanges(null, { x: 1 }).json, { x: { previous: null, current: 1 } });
  assert.equal(canonicalJson({ b: 1, a: [1, { d: 1, c: 2 }] }), '{"a":[1,{"c":2,"d":1}],"b":1}');
  assert.notEqual(jsonModeKey(schema, undefined), jsonModeKey(schema, 'only prices'));
});

test('classification: only 404/410 remove a page; errors, blocks and empty answers are failed fetches', () => {
  const page = (statusCode: number, markdown = '# A page\n\nwith text', title?: string, baselineHasContent = true) => classifyFetch({ statusCode, markdown, title, baselineHasContent }).kind;
  assert.equal(page(200), 'ok');
  assert.equal(page(404), 'removed');
  assert.equal(page(410), 'removed');
  for (const s of [500, 502, 503, 429, 403, 401, 400]) assert.equal(page(s), 'failed', String(s));
  assert.equal(page(200, 'Just a moment...\n\nEnable JavaScript and cookies to continue'), 'failed');
  assert.equal(page(200, 'x', 'Attention Required! | Cloudflare'), 'failed');
  assert.equal(page(200, ''), 'failed', 'an empty page where there was content is a failed render');
  assert.equal(page(200, '', undefined, false), 'ok', 'a page that was always empty is just empty');
  // A long article mentioning a captcha is still an article.
  assert.equal(page(200, `How to verify you are human: ${'text '.repeat(1_000)}`), 'ok');
});
