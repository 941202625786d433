import assert from 'node:assert/strict';
import { test } from 'node:test';
import { afterStep, newProgress, shouldHandOver, TERMS_OFFER_MESSAGE, toolQueue } from './decide';

test('tools go to the queue that serves them', () => {
  assert.equal(toolQueue('search'), 'fetch');
  assert.equal(toolQueue('map'), 'fetch');
  assert.equal(toolQueue('scrape'), 'fetch');
  assert.equal(toolQueue('extract'), 'llm');
  for (const t of ['finish', 'refuse', 'save_result', 'spawn_subagent', 'wait_subagents', 'no_such_tool']) assert.equal(toolQueue(t), 'control');
});

test('a run hands over after stepsPerRun steps, or when Temporal suggests it (never before its first step)', () => {
  const plan = { stepsPerRun: 3, maxSteps: 10 };
  assert.equal(shouldHandOver(2, plan, false), false);
  assert.equal(shouldHandOver(3, plan, false), true);
  assert.equal(shouldHandOver(0, plan, true), false);
  assert.equal(shouldHandOver(1, plan, true), true);
});

test('what a step\'s results mean: stop > credit limit > refusal > finish; one repair turn', () => {
  assert.deepEqual(afterStep([{ kind: 'done' }, { kind: 'stopped' }, { kind: 'credit_limit' }], newProgress()), { state: 'cancelled' });
  assert.deepEqual(afterStep([{ kind: 'credit_limit' }, { kind: 'refused' }], newProgress()), { state: 'credit_limit_reached' });
  assert.deepEqual(afterStep([{ kind: 'refused' }, { kind: 'finish', accepted: true }], newProgress()), { state: 'refused' });
  assert.deepEqual(afterStep([{ kind: 'done' }, { kind: 'finish', accepted: true }], newProgress()), { state: 'succeeded' });
  assert.equal(afterStep([{ kind: 'done' }], newProgress()), null);
  const p = newProgress();
  assert.equal(afterStep([{ kind: 'finish', accepted: false }], p), null, 'the first rejection is a repair turn');
  const end = afterStep([{ kind: 'finish', accepted: false }], p);
  assert.equal(end?.state, 'internal');
  assert.equal(end?.retryable, false);
});

test('a terms offer (onTermsRequired "ask") ends the turn as succeeded with the offer message; an accepted finish in the same step wins', () => {
  assert.deepEqual(afterStep([{ kind: 'done' }, { kind: 'terms_required' }], newProgress()), { state: 'succeeded', message: TERMS_OFFER_MESSAGE });
  assert.deepEqual(afterStep([{ kind: 'terms_required' }, { kind: 'finish', accepted: true }], newProgress()), { state: 'succeeded' });
  assert.deepEqual(afterStep([{ kind: 'terms_required' }, { kind: 'credit_limit' }], newProgress()), { state: 'credit_limit_reached' });
});
