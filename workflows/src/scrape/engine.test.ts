import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browserActivityTimeouts, OPTIONAL_BROWSER_PICKUP_MS, planEngine } from './engine';

const base = { formats: [{ type: 'markdown' }], waitFor: 0, mobile: false };

test('plain requests: HTTP, escalating on client-rendered HTML only when a browser worker exists', () => {
  assert.deepEqual(planEngine(base, true), { engine: 'http', escalateIfClientRendered: true });
  assert.deepEqual(planEngine(base, false), { engine: 'http', escalateIfClientRendered: false });
  assert.deepEqual(planEngine({ ...base, actions: [] }, true), { engine: 'http', escalateIfClientRendered: true }, 'an empty actions list needs nothing');
});

test('actions, screenshot, branding, mobile and profile require the browser; without one the request is unavailable', () => {
  const cases = [
    [{ actions: [{ type: 'scrape' }] }, 'actions'],
    [{ formats: [{ type: 'markdown' }, { type: 'screenshot' }] }, 'screenshot'],
    [{ formats: [{ type: 'branding' }] }, 'branding'],
    [{ mobile: true }, 'mobile'],
    [{ profile: { name: 'p', saveChanges: true } }, 'profile'],
  ] as const;
  for (const [extra, need] of cases) {
    assert.deepEqual(planEngine({ ...base, ...extra }, true), { engine: 'browser', required: true, reasons: [need] });
    assert.deepEqual(planEngine({ ...base, ...extra }, false), { engine: 'unavailable', reasons: [need] });
  }
});

test('waitFor prefers the browser but falls back to HTTP', () => {
  assert.deepEqual(planEngine({ ...base, waitFor: 500 }, true), { engine: 'browser', required: false, reasons: ['waitFor'] });
  assert.deepEqual(planEngine({ ...base, waitFor: 500 }, false), { engine: 'http', escalateIfClientRendered: false });
  assert.deepEqual(planEngine({ ...base, waitFor: 500, mobile: true }, true), { engine: 'browser', required: true, reasons: ['mobile', 'waitFor'] });
});

test('browser activity timeouts follow the remaining budget', () => {
  const req = browserActivityTimeouts(30_000, true);
  assert.equal(req.scheduleToStartTimeout, undefined);
  assert.equal(req.startToCloseTimeout, 32_000);
  assert.equal(browserActivityTimeouts(60_000, false).scheduleToStartTimeout, OPTIONAL_BROWSER_PICKUP_MS);
  assert.equal(browserActivityTimeouts(4_000, false).scheduleToStartTimeout, 2_000);
  assert.ok(browserActivityTimeouts(-5, true).startToCloseTimeout > 0, 'never a non-positive timeout');
});
