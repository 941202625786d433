import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BAD_STRINGS, fuzzCorpus } from './fuzz-corpus';

test('the corpus is deterministic and covers the bad strings', () => {
  const a = fuzzCorpus(7, 300, 'http://t.example/');
  const b = fuzzCorpus(7, 300, 'http://t.example/');
  assert.deepEqual(a.map((c) => [c.label, c.path, c.body?.toString('base64')]), b.map((c) => [c.label, c.path, c.body?.toString('base64')]));
  const big = fuzzCorpus(20_261_125, 3_000, 'http://t.example/');
  const text = big.map((c) => c.body?.toString() ?? '').join('\n');
  for (const s of BAD_STRINGS.slice(0, 6)) assert.ok(text.includes(JSON.stringify(s).slice(1, -1)) || text.includes(s), `covers ${JSON.stringify(s)}`);
  const paths = new Set(big.map((c) => `${c.method} ${c.path.split('?')[0]}`));
  for (const p of ['/v2/scrape', '/v2/crawl', '/v2/batch/scrape', '/v2/map', '/v2/parse', '/v2/crawl/params-preview']) assert.ok(paths.has(`POST ${p}`), `covers POST ${p}`);
  for (const p of ['/v2/scrape/not-a-uuid', '/v2/crawl/not-a-uuid/errors', '/v2/batch/scrape/%00', '/v2/crawl/active', '/v2/team/queue-status']) assert.ok(paths.has(`GET ${p}`), `covers GET ${p}`);
  assert.ok(big.some((c) => c.headers.expect === '100-continue' && c.body), 'covers Expect: 100-continue with a body');
});
