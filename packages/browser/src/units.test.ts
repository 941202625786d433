import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WdsError } from '@wds/errors';
import { AD_HOSTS, isAdHost } from './blocklist';
import { COOKIE_BANNER_CSS } from './consent';
import { COUNTRY_TIMEZONE, localeSettings, userAgents } from './emulation';
import { resolveChromiumExecutable } from './executable';
import { wrapScript } from './actions';
import { navigationError, playwrightMessage } from './errors';

test('ad block list: ~100 domains, subdomains match, look-alikes do not', () => {
  assert.ok(AD_HOSTS.length >= 100, `${AD_HOSTS.length} hosts`);
  assert.equal(new Set(AD_HOSTS).size, AD_HOSTS.length, 'no duplicates');
  assert.equal(isAdHost('doubleclick.net'), true);
  assert.equal(isAdHost('securepubads.g.doubleclick.net'), true);
  assert.equal(isAdHost('WWW.Google-Analytics.com.'), true);
  assert.equal(isAdHost('notdoubleclick.net'), false);
  assert.equal(isAdHost('doubleclick.net.example.com'), false);
  assert.equal(isAdHost('example.com'), false);
  assert.equal(isAdHost('yandex.ru'), false, 'only listed subdomains of mixed-use domains');
  assert.equal(isAdHost('mc.yandex.ru'), true);
});

test('cookie banner sheet covers the well-known consent managers', () => {
  for (const sel of ['#onetrust-consent-sdk', '#CybotCookiebotDialog', '#qc-cmp2-container', '#truste-consent-track', '.cc-window', '#cookie-banner']) {
    assert.ok(COOKIE_BANNER_CSS.includes(sel), sel);
  }
});

test('location settings: default US, country defaults, languages in order, timezone map', () => {
  assert.deepEqual(localeSettings(undefined), {
    locale: 'en-US', timezoneId: 'America/New_York', acceptLanguage: 'en-US,en;q=0.9', languages: ['en-US', 'en'],
  });
  const jp = localeSettings({ country: 'JP' });
  assert.equal(jp.locale, 'ja-JP');
  assert.equal(jp.timezoneId, 'Asia/Tokyo');
  const multi = localeSettings({ country: 'BE', languages: ['nl-BE', 'fr-BE'] });
  assert.equal(multi.acceptLanguage, 'nl-BE,nl;q=0.9,fr-BE;q=0.8,fr;q=0.7');
  assert.deepEqual(multi.languages, ['nl-BE', 'nl', 'fr-BE', 'fr']);
  assert.equal(multi.locale, 'nl-BE');
  assert.equal(localeSettings({ country: 'ZZ' }).timezoneId, 'UTC');
  for (const tz of Object.values(COUNTRY_TIMEZONE)) assert.doesNotThrow(() => new Intl.DateTimeFormat('en', { timeZone: tz }), tz);
});

test('user agents follow the browser major version and never say Headless', () => {
  const ua = userAgents('156.0.8078.79');
  assert.match(ua.desktop, /Chrome\/156\.0\.0\.0 Safari/);
  assert.match(ua.mobile, /Android.*Chrome\/156\.0\.0\.0 Mobile Safari/);
  assert.doesNotMatch(ua.desktop + ua.mobile, /Headless/);
});

test('executable resolution: an explicit path (CHROMIUM_PATH) must exist and the error names it; without one Chromium is found', () => {
  assert.throws(() => resolveChromiumExecutable('/nonexistent/chromium'), (e: unknown) => {
    assert.ok(e instanceof WdsError);
    assert.equal(e.code, 'BROWSER_NOT_FOUND');
    assert.match(e.message, /CHROMIUM_PATH/);
    return true;
  });
  assert.match(resolveChromiumExecutable(), /chrom/);
});

test('executeJavascript wrapping: expressions vs bodies', () => {
  const run = async (src: string) => (await (0, eval)(wrapScript(src).replace('typeof Node', "'undefined'"))) as { type: string; value: unknown };
  return (async () => {
    assert.deepEqual(await run('1 + 1'), { type: 'number', value: 2 });
    assert.deepEqual(await run('({a: 1})'), { type: 'object', value: { a: 1 } });
    assert.deepEqual(await run('{a: 1}'), { type: 'object', value: { a: 1 } }, 'parses as an object literal expression');
    assert.deepEqual(await run('const x = [1]; return x'), { type: 'array', value: [1] });
    assert.deepEqual(await run('return await Promise.resolve("p")'), { type: 'string', value: 'p' });
    assert.deepEqual(await run('1 // trailing comment'), { type: 'number', value: 1 });
    assert.deepEqual(await run('10n'), { type: 'bigint', value: '10' });
    assert.deepEqual(await run('let o = {}; o.self = o; return o'), { type: 'object', value: '[object Object]' });
  })();
});

test('Playwright messages are trimmed; navigation errors are mapped', () => {
  assert.equal(playwrightMessage(new Error('page.evaluate: Error: boom\n    at eval (x.js:1:1)\nCall log:\n  - stuff')), 'Error: boom');
  const u = new URL('http://example.com/');
  assert.equal(navigationError(new Error('page.goto: net::ERR_NAME_NOT_RESOLVED at http://example.com/'), u).code, 'SCRAPE_DNS_RESOLUTION_ERROR');
  assert.equal(navigationError(new Error('page.goto: net::ERR_CERT_AUTHORITY_INVALID at x'), u).code, 'SCRAPE_TLS_ERROR');
  const refused = navigationError(new Error('page.goto: net::ERR_CONNECTION_REFUSED at x'), u);
  assert.equal(refused.code, 'SCRAPE_CONNECTION_FAILED');
  assert.equal(refused.retryable, true);
  assert.equal(navigationError(new Error('page.goto: Download is starting'), u).kind, 'UNSUPPORTED_MEDIA_TYPE');
});
