import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { WdsError } from '@wds/errors';
import { transformHtml } from './transform';
import { looksClientRendered } from './heuristics';
import { closeTransformThreads, configureTransformThreads, looksClientRenderedAsync, transformHtmlAsync } from './transform-pool';
import type { TransformOptions } from './types';

const opts: TransformOptions = { onlyMainContent: true, removeBase64Images: true, want: { markdown: true, html: true, links: true, images: true } };
const page = (i: number) =>
  `<!doctype html><html lang="en"><head><title>Page ${i}</title></head><body><nav><a href="/">Home</a></nav>` +
  `<main><h1>Heading ${i}</h1><p>Text <a href="/p/${i + 1}">next</a> and <img src="/i/${i}.png" alt="x"></p><table><tr><th>a</th></tr><tr><td>${i}</td></tr></table></main></body></html>`;

after(() => closeTransformThreads());

test('pool threads convert exactly as the inline transform', async () => {
  configureTransformThreads(2);
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => transformHtmlAsync(page(i), `https://site.test/p/${i}`, opts, 30_000)));
  results.forEach((r, i) => assert.deepEqual(r, transformHtml(page(i), `https://site.test/p/${i}`, opts)));
});

test('errors come back as the WdsError the transform threw', async () => {
  configureTransformThreads(1);
  const bad = { ...opts, includeTags: ['p:::nope('] };
  const inline = (() => {
    try {
      transformHtml(page(1), 'https://site.test/', bad);
    } catch (e) {
      return e as WdsError;
    }
  })();
  assert.ok(inline instanceof WdsError, 'the inline transform rejects the selector');
  await assert.rejects(transformHtmlAsync(page(1), 'https://site.test/', bad, 30_000), (e: unknown) => e instanceof WdsError && e.kind === inline.kind && e.message === inline.message);
});

test('a conversion past its deadline fails with a timeout and the thread is replaced', async () => {
  configureTransformThreads(1);
  const huge = `<html><body>${'<div><p>deep <b>text</b></p>'.repeat(40_000)}${'</div>'.repeat(40_000)}</body></html>`;
  await assert.rejects(transformHtmlAsync(huge, 'https://site.test/', opts, 5), (e: unknown) => e instanceof WdsError && e.kind === 'REQUEST_TIMEOUT');
  // The replacement thread serves the next page.
  const r = await transformHtmlAsync(page(3), 'https://site.test/p/3', opts, 30_000);
  assert.equal(r.metadata.title, 'Page 3');
});

test('without threads pages are converted inline', async () => {
  configureTransformThreads(0);
  assert.deepEqual(await transformHtmlAsync(page(4), 'https://site.test/p/4', opts, 1), transformHtml(page(4), 'https://site.test/p/4', opts));
});

test('the escalation test runs on a pool thread, with the inline answer', async () => {
  configureTransformThreads(1);
  const shell = '<html><body><div id="root"></div><script src="/main.js"></script></body></html>';
  assert.equal(await looksClientRenderedAsync(shell, 30_000), true);
  assert.equal(await looksClientRenderedAsync(page(1), 30_000), looksClientRendered(page(1)));
  configureTransformThreads(0);
  assert.equal(await looksClientRenderedAsync(shell, 1), true);
});
