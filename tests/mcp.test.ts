import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { namespaceFor, startStack, until, type FixtureSite, type Stack } from '@wds/test-utils';
import { startEcosystemSite } from './fixture-site';

/**
 * firecrawl-mcp (npm), unchanged, pointed at WDS by its documented self-host variable
 * FIRECRAWL_API_URL: an MCP client (the official TypeScript SDK) starts it over stdio, lists its
 * tools and calls scrape, map and crawl against the fixture site.
 */
let stack: Stack;
let site: FixtureSite;
let client: Client;
let stderr = '';

before(async () => {
  [stack, site] = await Promise.all([startStack({ namespace: namespaceFor(import.meta.url) }), startEcosystemSite()]);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [fileURLToPath(import.meta.resolve('firecrawl-mcp/dist/index.js'))],
    // Only what the server needs: no inherited variables that could point it elsewhere.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', FIRECRAWL_API_URL: stack.url, FIRECRAWL_API_KEY: stack.apiKey },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-20_000)));
  client = new Client({ name: 'wds-mcp-test', version: '1.0.0' });
  await client.connect(transport);
});
after(async () => {
  await client?.close();
  await site?.close();
  await stack?.stop();
});

/** A tool call's text content, failing with the server's own words when the call failed. */
async function callTool(name: string, args: Record<string, unknown>): Promise<string> {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text?: string }[] };
  const text = r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  assert.ok(!r.isError, `${name} failed: ${text}\n${stderr.slice(-2000)}`);
  return text;
}

test('lists the scrape, map and crawl tools', async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ['firecrawl_scrape', 'firecrawl_map', 'firecrawl_crawl', 'firecrawl_check_crawl_status']) assert.ok(names.includes(n), names.join(', '));
});

test('firecrawl_scrape returns the page as markdown', async () => {
  const text = await callTool('firecrawl_scrape', { url: site.url('/docs/alpha'), formats: ['markdown'], maxAge: 0 });
  assert.match(text, /# Alpha page/);
  assert.match(text, /The first document\./);
});

test('firecrawl_map returns the site URLs', async () => {
  const text = await callTool('firecrawl_map', { url: site.url('/') });
  for (const p of ['/', '/docs/alpha', '/docs/beta']) assert.ok(text.includes(JSON.stringify(site.url(p)).slice(1, -1)), `${p} in ${text}`);
});

test('firecrawl_crawl starts a crawl that firecrawl_check_crawl_status follows to the end', async () => {
  const started = await callTool('firecrawl_crawl', { url: site.url('/'), limit: 5, sitemap: 'skip' });
  const id = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(started)?.[0];
  assert.ok(id, `a crawl id in ${started}`);
  let status = '';
  await until(async () => {
    status = await callTool('firecrawl_check_crawl_status', { id });
    return /"status":\s*"completed"/.test(status);
  }, `crawl ${id} to complete`, { timeoutMs: 120_000, everyMs: 1_000 });
  for (const h of ['Ecosystem home', 'Alpha page', 'Beta page']) assert.match(status, new RegExp(h));
});
