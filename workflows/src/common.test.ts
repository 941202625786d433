import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ERROR_KINDS } from '@wds/errors';
import { NON_RETRYABLE_KINDS } from './common';

test('the workflow retry policy lists exactly the non-retryable kinds of the error table', () => {
  const fromTable = Object.entries(ERROR_KINDS).filter(([, v]) => !v.retryable).map(([k]) => k).sort();
  assert.deepEqual([...NON_RETRYABLE_KINDS].sort(), fromTable);
});
