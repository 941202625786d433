import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileWildcard } from './expand';

test('https://site/* is the whole site; map starts at its root', () => {
  const w = compileWildcard('https://example.com/*', false);
  assert.equal(w.base, 'https://example.com/');
  assert.ok(w.matches('https://example.com/'));
  assert.ok(w.matches('https://example.com/a/b?c=1'));
  assert.ok(w.matches('https://www.example.com/a'), 'www is the same site');
  assert.ok(!w.matches('https://blog.example.com/a'), 'a subdomain only with includeSubdomains');
  assert.ok(!w.matches('https://other.com/a'));
  assert.ok(!w.matches('not a url'));
});

test('a section wildcard matches the section and its own page, not its siblings', () => {
  const w = compileWildcard('https://example.com/docs/*', false);
  assert.equal(w.base, 'https://example.com/docs/');
  assert.ok(w.matches('https://example.com/docs/intro'));
  assert.ok(w.matches('https://example.com/docs/a/b'));
  assert.ok(w.matches('https://example.com/docs/'));
  assert.ok(w.matches('https://example.com/docs'), 'the section page without its slash');
  assert.ok(!w.matches('https://example.com/docsearch'));
  assert.ok(!w.matches('https://example.com/blog/docs/x'));
});

test('a star inside the path; regex characters in the pattern are literal; subdomains when asked', () => {
  const w = compileWildcard('https://example.com/v1.2/*/api', true);
  assert.equal(w.base, 'https://example.com/v1.2/');
  assert.ok(w.matches('https://example.com/v1.2/users/api'));
  assert.ok(!w.matches('https://example.com/v1x2/users/api'), 'the dot is not a regex wildcard');
  assert.ok(!w.matches('https://example.com/v1.2/users/api/more'));
  assert.ok(w.matches('https://api.example.com/v1.2/x/api'), 'a subdomain of the site with includeSubdomains');
});
