import { test } from 'node:test';
import { call, html, namespaceFor, startFixtureSite, startStack } from '@wds/test-utils';
test('debug', async () => {
  const site = await startFixtureSite({ '/p': html('<html><body><p>x</p></body></html>') });
  const stack = await startStack({ namespace: namespaceFor(import.meta.url) });
  try {
    const r = await call(stack, 'POST', '/v2/scrape', { url: site.url('/p'), maxAge: 0 });
    console.log('STATUS', r.status, r.text);
    const r2 = await call(stack, 'POST', '/v2/scrape', { url: site.url('/p') });
    console.log('STATUS2', r2.status, r2.text.slice(0, 200));
  } finally {
    console.log('API OUTPUT', stack.api.output().slice(-3000));
    console.log('WORKER OUTPUT', stack.worker.output().slice(-3000));
    await stack.stop();
    await site.close();
  }
});
