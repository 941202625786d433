import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowedUrls, threatModeProblem, threatUrlCheck, threatVerdict } from './threat';

test('lists: exact domains, *. globs (subdomains only), TLDs on label boundaries; the whitelist wins; off checks nothing', () => {
  const p = { blacklist: ['evil.example', '*.risky.example'], blockedTlds: ['zip'] };
  assert.equal(threatVerdict('https://evil.example/x', p), 'blacklist');
  assert.equal(threatVerdict('https://www.evil.example/x', p), null, 'an exact entry is that host only');
  assert.equal(threatVerdict('https://a.b.risky.example/', p), 'blacklist');
  assert.equal(threatVerdict('https://risky.example/', p), null, 'a glob covers subdomains, not the domain itself');
  assert.equal(threatVerdict('https://notrisky.example/', p), null);
  assert.equal(threatVerdict('https://files.zip/a', p), 'blocked_tld');
  assert.equal(threatVerdict('https://zip.example/a', p), null);
  assert.equal(threatVerdict('https://a.zipper/', p), null);
  assert.equal(threatVerdict('https://evil.example/', { ...p, whitelist: ['evil.example'] }), null);
  assert.equal(threatVerdict('https://evil.example/', { ...p, mode: 'off' }), null);
  assert.equal(threatVerdict('https://evil.example/', undefined), null);
});

test('hosts are compared canonically: case, trailing dot, IDN and alternate IPv4 spellings cannot slip past a list', () => {
  assert.equal(threatVerdict('https://EVIL.Example./', { blacklist: ['evil.example'] }), 'blacklist');
  assert.equal(threatVerdict('http://2130706433/', { blacklist: ['127.0.0.1'] }), 'blacklist');
  assert.equal(threatVerdict('http://0x7f.0.0.1/', { blacklist: ['127.0.0.1'] }), 'blacklist');
  assert.equal(threatVerdict('https://bücher.example/', { blacklist: ['xn--bcher-kva.example'] }), 'blacklist');
  assert.equal(threatVerdict('https://EVIL.example/', { blacklist: ['Evil.Example'] }), 'blacklist');
});

test('allowedUrls keeps what the policy allows; modes without a classifier are refused before anything runs', () => {
  const rows = [{ url: 'https://a.example/' }, { url: 'https://x.risky.example/' }];
  assert.deepEqual(allowedUrls(rows, (r) => r.url, { blacklist: ['*.risky.example'] }), [rows[0]]);
  assert.equal(threatModeProblem({ mode: 'normal' })?.kind, 'FEATURE_NOT_AVAILABLE');
  assert.equal(threatModeProblem({ mode: 'normal', failurePolicy: 'open' }), null);
  assert.equal(threatModeProblem({ mode: 'zscaler' })?.status, 403);
  assert.equal(threatModeProblem({ mode: 'manual-only' }), null);
  assert.equal(threatModeProblem(undefined), null);
});

test("threatUrlCheck: fetchPage's hook refuses a blocked URL with unsafe_domain_blocked; no policy or mode off checks nothing", () => {
  const check = threatUrlCheck({ blacklist: ['evil.example'] });
  assert.ok(check);
  assert.throws(() => check(new URL('https://evil.example/x')), (e: { code?: string; status?: number }) => e.code === 'unsafe_domain_blocked' && e.status === 403);
  assert.doesNotThrow(() => check(new URL('https://good.example/x')));
  assert.equal(threatUrlCheck(undefined), undefined);
  assert.equal(threatUrlCheck({ mode: 'off', blacklist: ['evil.example'] }), undefined);
});
