import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UNRECOGNIZED_KEYS_MESSAGE, WdsError } from './index';

// The validation envelope Firecrawl answers (code BAD_REQUEST; error its unrecognized-key sentence,
// a custom rule's message, else "Bad Request"), built in the constructor so every route has it.
test('a per-field refusal carries code BAD_REQUEST and the reason a client can show', () => {
  const custom = new WdsError('BAD_REQUEST', { details: [{ code: 'custom', path: ['waitFor'], message: 'waitFor must not exceed half of timeout' }, { code: 'too_big', path: ['timeout'], message: 'x' }] });
  assert.equal(custom.code, 'BAD_REQUEST');
  assert.equal(custom.message, 'waitFor must not exceed half of timeout');
  const builtin = new WdsError('BAD_REQUEST', { details: [{ code: 'invalid_type', path: ['timeout'], message: 'Expected number' }] });
  assert.equal(builtin.message, 'Bad Request', 'a type/range issue keeps the generic sentence; its text is in details');
  assert.equal(builtin.code, 'BAD_REQUEST');
  const unknown = new WdsError('BAD_REQUEST', { details: [{ code: 'custom', path: ['a'], message: 'first' }, { code: 'unrecognized_keys', path: [], message: 'y' }] });
  assert.equal(unknown.message, UNRECOGNIZED_KEYS_MESSAGE, 'an unknown key wins wherever it is');
});

test('an explicit message or code stays; errors without details get no code; INVALID_URL keeps its sentence', () => {
  const explicit = new WdsError('BAD_REQUEST', { message: 'Send the options part once.', code: 'PARSE_UNSUPPORTED_OPTIONS', details: [{ code: 'custom', path: [], message: 'other' }] });
  assert.equal(explicit.message, 'Send the options part once.');
  assert.equal(explicit.code, 'PARSE_UNSUPPORTED_OPTIONS');
  assert.equal(new WdsError('BAD_REQUEST', { message: 'plain' }).code, undefined);
  const url = new WdsError('INVALID_URL', { details: [{ code: 'custom', path: ['url'], message: 'URL uses unsupported protocol' }] });
  assert.equal(url.message, 'Invalid URL');
  assert.equal(url.code, 'BAD_REQUEST');
});
