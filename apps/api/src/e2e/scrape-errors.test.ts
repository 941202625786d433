import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import Firecrawl, { SdkError } from '@mendable/firecrawl-js';
import { call, html, namespaceFor, startFixtureSite, startStack, testInfra, type FixtureSite, type Stack } from '@wds/test-utils';

// Raw HTTP for every error case: validation, auth, permissions, unavailable features, SSRF.
const run = promisify(execFile);
let stack: Stack;
let guarded: Stack; // WDS_ALLOW_PRIVATE_NETWORK left at its default (false)
let site: FixtureSite;

before(async () => {
  [stack, guarded, site] = await Promise.all([
    startStack({ namespace: namespaceFor(import.meta.url) }),
    startStack({ namespace: namespaceFor(import.meta.url, 'b'), env: { WDS_ALLOW_PRIVATE_NETWORK: 'false' } }),
    startFixtureSite({ '/ok': html('<html><body><main><p>ok page</p></main></body></html>') }),
  ]);
});
after(async () => {
  await Promise.all([stack?.stop(), guarded?.stop()]);
  await site?.close();
});

const scrape = (body: unknown, headers?: Record<string, string>) => call(stack, 'POST', '/v2/scrape', body, headers);

const UNRECOGNIZED = 'Unrecognized key in body -- please review the v2 API documentation for request body changes';

function assertError(r: { status: number; json: any }, status: number, error?: string | RegExp) {
  assert.equal(r.status, status, JSON.stringify(r.json));
  assert.equal(r.json.success, false);
  assert.equal(typeof r.json.error, 'string');
  if (typeof error === 'string') assert.equal(r.json.error, error);
  else if (error) assert.match(r.json.error, error);
}

function detailPaths(r: { json: any }): string[] {
  return (r.json.details as { path: (string | number)[] }[]).map((d) => d.path.join('.'));
}

describe('url', () => {
  for (const [label, body] of [
    ['missing', {}],
    ['empty', { url: '' }],
    ['not a URL', { url: 'not a url' }],
    ['relative', { url: '/just/a/path' }],
    ['ftp scheme', { url: 'ftp://example.com/file' }],
    ['javascript scheme', { url: 'javascript:alert(1)' }],
    ['a number', { url: 42 }],
  ] as const) {
    test(`${label} → 400 Invalid URL with details`, async () => {
      const r = await scrape(body);
      assertError(r, 400, 'Invalid URL');
      assert.ok(detailPaths(r).includes('url'));
    });
  }
});

describe('fields of the scrape request', () => {
  const url = 'http://127.0.0.1:9/x';
  // The error is Firecrawl's: its sentence for an unknown key, a custom rule's message, else "Bad Request" (code BAD_REQUEST).
  const cases: [string, Record<string, unknown>, string, string?][] = [
    ['unknown field', { nope: true }, '', UNRECOGNIZED],
    ['formats not an array', { formats: 'markdown' }, 'formats'],
    ['unknown format name', { formats: ['markdownn'] }, 'formats.0'],
    ['json as a bare string', { formats: ['json'] }, 'formats.0'],
    ['json object without prompt or schema', { formats: [{ type: 'json' }] }, 'formats.0', "json format requires either 'prompt' or 'schema' (or both)"],
    ['screenshot quality out of range', { formats: [{ type: 'screenshot', quality: 101 }] }, 'formats.0'],
    ['onlyMainContent not boolean', { onlyMainContent: 'yes' }, 'onlyMainContent'],
    ['includeTags not array of strings', { includeTags: [1] }, 'includeTags.0'],
    ['maxAge negative', { maxAge: -1 }, 'maxAge'],
    ['maxAge fractional', { maxAge: 1.5 }, 'maxAge'],
    ['minAge negative', { minAge: -5 }, 'minAge'],
    ['headers value not string', { headers: { a: 1 } }, 'headers.a'],
    ['header value with newline', { headers: { a: 'x\r\ny: z' } }, 'headers.a'],
    // Schemathesis: a control character or a character beyond Latin-1 cannot be sent (a 502 once, from the fetch).
    ['header value with a control character', { headers: { a: 'x\u0017' } }, 'headers.a'],
    ['header value beyond Latin-1', { headers: { a: '\ud951\udf2e' } }, 'headers.a'],
    ['waitFor negative', { waitFor: -1 }, 'waitFor'],
    ['waitFor above half of timeout', { waitFor: 6000, timeout: 10000 }, 'waitFor', 'waitFor must not exceed half of timeout'],
    ['timeout below 1000', { timeout: 999 }, 'timeout'],
    ['timeout above 300000', { timeout: 300001 }, 'timeout'],
    ['mobile not boolean', { mobile: 1 }, 'mobile'],
    ['skipTlsVerification not boolean', { skipTlsVerification: 'no' }, 'skipTlsVerification'],
    ['parsers type unknown', { parsers: [{ type: 'docx' }] }, 'parsers.0'],
    ['parsers maxPages 0', { parsers: [{ type: 'pdf', maxPages: 0 }] }, 'parsers.0'],
    ['parsers maxPages 10001', { parsers: [{ type: 'pdf', maxPages: 10001 }] }, 'parsers.0'],
    ['parsers mode unknown', { parsers: [{ type: 'pdf', mode: 'slow' }] }, 'parsers.0'],
    ['parsers extra property', { parsers: [{ type: 'pdf', extra: 1 }] }, 'parsers.0', UNRECOGNIZED],
    ['actions unknown type', { actions: [{ type: 'dance' }] }, 'actions.0.type'],
    ['wait with neither field', { actions: [{ type: 'wait' }] }, 'actions.0', 'wait action needs exactly one of milliseconds or selector'],
    ['wait with both fields', { actions: [{ type: 'wait', milliseconds: 5, selector: 'a' }] }, 'actions.0', 'wait action needs exactly one of milliseconds or selector'],
    ['click without selector', { actions: [{ type: 'click' }] }, 'actions.0.selector'],
    ['screenshot viewport incomplete', { actions: [{ type: 'screenshot', viewport: { width: 100 } }] }, 'actions.0.viewport.height'],
    ['scroll direction unknown', { actions: [{ type: 'scroll', direction: 'left' }] }, 'actions.0.direction'],
    ['pdf format unknown', { actions: [{ type: 'pdf', format: 'B5' }] }, 'actions.0.format'],
    ['location country lower case', { location: { country: 'us' } }, 'location.country'],
    ['location country three letters', { location: { country: 'USA' } }, 'location.country'],
    ['location languages not array', { location: { languages: 'en' } }, 'location.languages'],
    ['removeBase64Images not boolean', { removeBase64Images: null }, 'removeBase64Images'],
    ['blockAds not boolean', { blockAds: 'true' }, 'blockAds'],
    ['proxy unknown', { proxy: 'residential' }, 'proxy'],
    ['storeInCache not boolean', { storeInCache: 0 }, 'storeInCache'],
    ['lockdown not boolean', { lockdown: 'true' }, 'lockdown'],
    ['redactPII bad mode', { redactPII: { mode: 'extreme' } }, 'redactPII'],
    ['profile name empty', { profile: { name: '' } }, 'profile.name'],
    ['profile name too long', { profile: { name: 'x'.repeat(129) } }, 'profile.name'],
    ['profile without name', { profile: { saveChanges: true } }, 'profile.name'],
    ['zeroDataRetention not boolean', { zeroDataRetention: 'yes' }, 'zeroDataRetention'],
    ['domainTools not boolean', { domainTools: 1 }, 'domainTools'],
  ];
  for (const [label, extra, path, error = 'Bad Request'] of cases) {
    test(`${label} → 400 ${error} naming ${path || 'the field'}`, async () => {
      const r = await scrape({ url, ...extra });
      assertError(r, 400, error);
      assert.equal(r.json.code, 'BAD_REQUEST');
      assert.ok(Array.isArray(r.json.details) && r.json.details.length > 0);
      if (path) assert.ok(detailPaths(r).some((p) => p === path || p.startsWith(`${path}.`)), `details ${JSON.stringify(r.json.details)} should name ${path}`);
      else assert.deepEqual(r.json.details[0].keys, ['nope']);
    });
  }

  test('waitFor exactly half of timeout is accepted by validation', async () => {
    const r = await scrape({ url: site.url('/ok'), waitFor: 1000, timeout: 2000, maxAge: 0 });
    assert.equal(r.status, 200, r.text);
  });
});

describe('request bodies', () => {
  test('malformed JSON → 400 BAD_REQUEST_INVALID_JSON, before the key is looked at', async () => {
    const r = await scrape('{"url": ');
    assertError(r, 400, 'Bad request, malformed JSON');
    assert.equal(r.json.code, 'BAD_REQUEST_INVALID_JSON');
    const unauth = await fetch(`${stack.url}/v2/scrape`, { method: 'POST', headers: { authorization: 'Bearer wrong-key-123', 'content-type': 'application/json' }, body: '{"url": ' });
    assert.equal(unauth.status, 400);
    assert.equal(((await unauth.json()) as { code: string }).code, 'BAD_REQUEST_INVALID_JSON');
  });
  test('a JSON array body → 400', async () => assertError(await scrape([1, 2]), 400, 'Bad Request'));
  test('a non-JSON content type → 415', async () => {
    const r = await fetch(`${stack.url}/v2/scrape`, { method: 'POST', headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'text/plain' }, body: 'url=x' });
    assert.equal(r.status, 415);
    assert.equal(((await r.json()) as { success: boolean }).success, false);
  });
  test('unknown route → 404 in the error body shape', async () => assertError(await call(stack, 'GET', '/v2/nothing-here'), 404));
});

describe('catalog mode', () => {
  test('catalog together with url or scrape options → 400', async () => {
    const r = await scrape({ catalog: { provider: 'p', capability: 'c' }, url: 'https://example.com' });
    assertError(r, 400);
    assert.deepEqual(r.json.details[0].keys, ['url']);
    assertError(await scrape({ catalog: { provider: 'p', capability: 'c' }, formats: ['markdown'] }), 400);
  });
  test('catalog call with extra keys, bad lengths or too many calls → 400', async () => {
    assertError(await scrape({ catalog: { provider: 'p', capability: 'c', extra: 1 } }), 400);
    assertError(await scrape({ catalog: { provider: '', capability: 'c' } }), 400);
    assertError(await scrape({ catalog: { provider: 'p'.repeat(201), capability: 'c' } }), 400);
    assertError(await scrape({ catalog: Array.from({ length: 11 }, () => ({ provider: 'p', capability: 'c' })) }), 400);
    assertError(await scrape({ catalog: [] }), 400);
  });
  test('malformed x-request-id → 400', async () => {
    assertError(await scrape({ catalog: { provider: 'p', capability: 'c' } }, { 'x-request-id': 'has spaces!' }), 400);
  });
  test('catalog not enabled for the team → 403', async () => {
    assertError(await scrape({ catalog: { provider: 'p', capability: 'c' }, timeout: 5000, origin: 'x' }), 403);
  });
  test('an enabled team gets 404 unknown_provider (no providers are catalogued)', async () => {
    const t = await stack.newTeam({ flags: { catalog: true } });
    const r = await call({ url: stack.url, apiKey: t.apiKey }, 'POST', '/v2/scrape', { catalog: [{ provider: 'nope', capability: 'x/y' }] });
    assertError(r, 404);
    assert.equal(r.json.code, 'unknown_provider');
  });
});

describe('features this deployment does not have yet', () => {
  for (const [label, extra, needle] of [
    ['json format', { formats: [{ type: 'json', prompt: 'x' }] }, "'json'"],
    ['summary format', { formats: ['markdown', 'summary'] }, "'summary'"],
    ['onlyCleanContent', { onlyCleanContent: true }, "'onlyCleanContent'"],
  ] as const) {
    test(`${label} → 400 naming it`, async () => {
      const r = await scrape({ url: site.url('/ok'), ...extra });
      assertError(r, 400);
      assert.equal(r.json.code, 'FEATURE_NOT_AVAILABLE');
      assert.ok(r.json.error.includes(needle), r.json.error);
      assert.match(r.json.error, /not available in this deployment/);
    });
  }
  test('agent jobs without an LLM → 400 FEATURE_NOT_AVAILABLE naming the variable to set', async () => {
    const r = await call(stack, 'POST', '/v2/agent', { prompt: 'Find the prices' });
    assertError(r, 400);
    assert.equal(r.json.code, 'FEATURE_NOT_AVAILABLE');
    assert.match(r.json.error, /OPENAI_API_KEY/);
  });
  test('through the SDK the error surfaces with status and code', async () => {
    const fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
    await assert.rejects(fc.scrape(site.url('/ok'), { formats: ['summary'] }), (e: unknown) => {
      assert.ok(e instanceof SdkError);
      assert.equal(e.status, 400);
      assert.equal(e.code, 'FEATURE_NOT_AVAILABLE');
      return true;
    });
  });
});

// This file's stack has no worker on wds-browser (apps/api/src/e2e/browser.test.ts has one).
describe('browser features without a browser worker', () => {
  for (const [label, extra, needle] of [
    ['screenshot format', { formats: ['screenshot'] }, 'screenshot'],
    ['branding format', { formats: ['branding'] }, 'branding'],
    ['actions', { actions: [{ type: 'wait', milliseconds: 10 }] }, 'actions'],
    ['mobile', { mobile: true }, 'mobile'],
    ['profile', { profile: { name: 'p' } }, 'profile'],
  ] as const) {
    test(`${label} → 503 BROWSER_UNAVAILABLE naming it`, async () => {
      const r = await scrape({ url: site.url('/ok'), ...extra });
      assertError(r, 503);
      assert.equal(r.json.code, 'BROWSER_UNAVAILABLE');
      assert.ok(r.json.error.includes(needle), r.json.error);
      assert.match(r.json.error, /wds-browser/);
    });
  }
  test('in crawl and batch scrape each such page fails with the same reason; the job completes', async () => {
    for (const [path, body] of [
      ['/v2/crawl', { url: site.url('/ok'), limit: 1, sitemap: 'skip', scrapeOptions: { actions: [{ type: 'scrape' }] } }],
      ['/v2/batch/scrape', { urls: [site.url('/ok')], formats: ['screenshot'] }],
    ] as const) {
      const started = await call(stack, 'POST', path, body);
      assert.equal(started.status, 200, started.text);
      let s = await call(stack, 'GET', `${path}/${started.json.id}`);
      for (let i = 0; i < 200 && s.json.status === 'scraping'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        s = await call(stack, 'GET', `${path}/${started.json.id}`);
      }
      assert.equal(s.json.status, 'completed');
      assert.deepEqual([s.json.completed, s.json.data.length], [0, 0]);
      const errors = await call(stack, 'GET', `${path}/${started.json.id}/errors`);
      assert.equal(errors.json.errors.length, 1);
      assert.match(errors.json.errors[0].error, /needs the browser engine .*wds-browser/);
    }
  });
});

describe('team enablement', () => {
  test('zeroDataRetention without team enablement → 403', async () => {
    assertError(await scrape({ url: site.url('/ok'), zeroDataRetention: true }), 403);
  });
  test('zeroDataRetention on an enabled team scrapes and keeps nothing', async () => {
    const t = await stack.newTeam({ flags: { zeroDataRetention: true } });
    const r = await call({ url: stack.url, apiKey: t.apiKey }, 'POST', '/v2/scrape', { url: site.url('/ok'), zeroDataRetention: true, maxAge: 0 });
    assert.equal(r.status, 200, r.text);
    const left = await stack.db.pool.query('SELECT count(*)::int AS n FROM scrape_jobs WHERE team_id = $1', [t.teamId]);
    assert.equal(left.rows[0].n, 0);
  });
  test('domainTools without catalog access → 403', async () => {
    assertError(await scrape({ url: site.url('/ok'), domainTools: true }), 403);
  });
});

describe('authentication', () => {
  const noKey = (headers: Record<string, string>) =>
    fetch(`${stack.url}/v2/scrape`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ url: site.url('/ok') }) });
  for (const [label, headers] of [
    ['missing header', {}],
    ['not Bearer', { authorization: 'Basic fc-0000000000000000000000000000dead' }],
    ['empty bearer', { authorization: 'Bearer ' }],
    ['unknown key', { authorization: 'Bearer fc-0000000000000000000000000000dead' }],
  ] as const) {
    test(`${label} → 401 Unauthorized: Invalid token`, async () => {
      const r = await noKey(headers as Record<string, string>);
      assert.equal(r.status, 401);
      assert.deepEqual(await r.json(), { success: false, error: 'Unauthorized: Invalid token' });
    });
  }
  test('GET routes need the key too', async () => {
    const r = await fetch(`${stack.url}/v2/scrape/00000000-0000-0000-0000-000000000000`);
    assert.equal(r.status, 401);
  });

  test('keys command: a created key works, a revoked key gets 401', async () => {
    const env = { ...process.env, DATABASE_URL: stack.env.DATABASE_URL };
    const cli = ['--import', 'tsx', 'apps/server/src/keys.ts'];
    const created = await run(process.execPath, [...cli, 'create', '--team', 'cli-team'], { env, cwd: new URL('../../../../', import.meta.url).pathname });
    const key = created.stdout.trim();
    assert.match(key, /^fc-[0-9a-f]{32}$/);
    const ok = await call({ url: stack.url, apiKey: key }, 'POST', '/v2/scrape', { url: site.url('/ok') });
    assert.equal(ok.status, 200, ok.text);
    await run(process.execPath, [...cli, 'revoke', key], { env, cwd: new URL('../../../../', import.meta.url).pathname });
    const revoked = await call({ url: stack.url, apiKey: key }, 'POST', '/v2/scrape', { url: site.url('/ok') });
    assertError(revoked, 401, 'Unauthorized: Invalid token');
    const stored = await stack.db.pool.query('SELECT count(*)::int AS n FROM api_keys WHERE key_hash = $1 OR key_prefix = $1', [key]);
    assert.equal(stored.rows[0].n, 0, 'the key itself is never stored');
  });

  test('a key without the scrape scope → 403 Forbidden', async () => {
    const t = await stack.newTeam({ scopes: ['crawl'] });
    const r = await call({ url: stack.url, apiKey: t.apiKey }, 'POST', '/v2/scrape', { url: site.url('/ok') });
    assertError(r, 403, 'Forbidden');
  });
});

describe('SSRF guard (WDS_ALLOW_PRIVATE_NETWORK unset)', () => {
  for (const host of ['127.0.0.1', 'localhost', '[::1]', '127.1', '0x7f000001']) {
    test(`${host} is refused with a clear 4xx and no request reaches it`, async () => {
      const before = site.hits('/ok');
      const port = new URL(site.origin).port;
      const r = await call(guarded, 'POST', '/v2/scrape', { url: `http://${host}:${port}/ok`, maxAge: 0 });
      assertError(r, 403);
      assert.equal(r.json.code, 'SCRAPE_SSRF_BLOCKED');
      assert.match(r.json.error, /private, loopback or reserved/);
      assert.equal(site.hits('/ok'), before);
    });
  }
  test('link-local metadata address is refused', async () => {
    const r = await call(guarded, 'POST', '/v2/scrape', { url: 'http://169.254.169.254/latest/meta-data/', timeout: 3000 });
    assertError(r, 403);
    assert.equal(r.json.code, 'SCRAPE_SSRF_BLOCKED');
  });
});

describe('configuration', () => {
  test('a bad variable fails the start with one line naming it', async () => {
    const { databaseUrl } = testInfra();
    const res = await run(process.execPath, ['--import', 'tsx', 'apps/api/src/main.ts'], {
      env: { ...process.env, DATABASE_URL: databaseUrl, PORT: 'not-a-port' },
      cwd: new URL('../../../../', import.meta.url).pathname,
    }).then(() => null, (e) => e as { code: number; stderr: string });
    assert.ok(res, 'the API must refuse to start');
    assert.equal(res.code, 78);
    const lines = res.stderr.trim().split('\n');
    assert.equal(lines.length, 1, res.stderr);
    assert.match(lines[0]!, /^Invalid configuration: PORT /);
  });
});

describe('robustness', () => {
  test('an unparseable CSS selector in includeTags/excludeTags → 400 naming it', async () => {
    const r = await scrape({ url: site.url('/ok'), includeTags: ['div[[['] });
    assertError(r, 400, /Invalid includeTags/);
    assertError(await scrape({ url: site.url('/ok'), excludeTags: ['::nope('] }), 400, /Invalid excludeTags/);
  });

  test('random and mutated bodies never get a 5xx and always get the error body shape', async () => {
    // Deterministic pseudo-random generator so a failure reproduces.
    let seed = 42;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const atoms = [null, true, false, 0, -1, 1.5, 1e300, '', 'x', 'http://', 'https://example.com', '{}', [], {}, 'a'.repeat(10_000)];
    const value = (depth: number): unknown =>
      depth > 2 || rnd() < 0.5
        ? pick(atoms)
        : rnd() < 0.5
          ? Array.from({ length: Math.floor(rnd() * 3) }, () => value(depth + 1))
          : Object.fromEntries(Array.from({ length: Math.floor(rnd() * 3) }, () => [pick(fields), value(depth + 1)]));
    const fields = ['url', 'formats', 'type', 'actions', 'location', 'parsers', 'headers', 'timeout', 'waitFor', 'maxAge', 'minAge', 'catalog', 'provider', 'profile', 'name', 'country', 'includeTags', 'selector'];
    for (let i = 0; i < 150; i++) {
      const body = Object.fromEntries(Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => [pick(fields), value(0)]));
      // Keep outbound requests off: these bodies are about validation, not fetching.
      if (typeof body.url === 'string') body.url = 'http://127.0.0.1:9/unreachable';
      const r = await scrape({ ...body, timeout: 1000 });
      assert.ok(r.status < 500 || r.status === 502, `status ${r.status} for ${JSON.stringify(body).slice(0, 300)}: ${r.text.slice(0, 300)}`);
      if (r.status !== 200) {
        assert.equal(r.json?.success, false, r.text);
        assert.equal(typeof r.json.error, 'string');
      }
    }
  });
});
