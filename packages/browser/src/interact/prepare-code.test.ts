import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareCode } from './prepare-code';

const expr = (code: string) => {
  const p = prepareCode(code);
  assert.ok('expression' in p, JSON.stringify(p));
  return p.expression;
};

test('the completion value is kept by the runner, not returned to CDP: last expression, if/try/labelled blocks', () => {
  assert.equal(expr('await page.title()'), '__wdsRun(async () => { __wdsKeep((await page.title()\n))\n})');
  assert.equal(expr('const a = 1;\na + 1; // done'), '__wdsRun(async () => { const a = 1;\n__wdsKeep((a + 1\n)); // done\n})');
  assert.match(expr(`try { await x(); 'ok' } catch (e) { 'caught' }`), /try \{ await x\(\); __wdsKeep\(\('ok'\n\)\) \} catch \(e\) \{ __wdsKeep\(\('caught'\n\)\) \}/);
  assert.match(expr(`if (a) { 1 } else 2`), /if \(a\) \{ __wdsKeep\(\(1\n\)\) \} else __wdsKeep\(\(2\n\)\)/);
  // Nothing to keep: a declaration, a loop; `return` is the runner's too.
  assert.equal(expr('let x = 1'), '__wdsRun(async () => { let x = 1\n})');
  assert.equal(expr('for (;;) { 1; break }'), '__wdsRun(async () => { for (;;) { 1; break }\n})');
  assert.equal(expr('return 5'), '__wdsRun(async () => { return 5\n})');
});

test('code that does not parse does not run: its SyntaxError is the answer (closing the wrapper\'s braces cannot escape it)', () => {
  assert.deepEqual(prepareCode('syntax error('), { syntaxError: 'SyntaxError: Unexpected token (1:7)' });
  const escape = prepareCode(`}); throw new Error('x'.repeat(1e8)); (async () => {`);
  assert.ok('syntaxError' in escape);
});
