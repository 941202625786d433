import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUILTIN_ENTRIES } from './builtins';
import { toolContract } from './contracts';
import { hostCandidates, matchesDomain, normalizeDomain, urlsInText } from './domains';
import { entriesOfFile } from './file';
import { findTools } from './find-tools';
import { requestFingerprint } from './options';
import { rankByQuery } from './rank';

const FILE = {
  providers: [
    {
      id: 'particle',
      name: 'Particle',
      description: 'Podcast transcripts.',
      categories: ['podcasts'],
      domains: ['podcasts.apple.com', 'https://Open.Spotify.com/'],
      endpoint: 'https://particle.example/wds',
      capabilities: [
        {
          id: 'podcasts/episodes/search',
          name: 'Episode search',
          description: 'Find podcast episodes that discussed something.',
          creditsCost: 15,
          options: {
            type: 'object',
            properties: { semantic_search: { type: 'string', description: 'What was talked about.' }, keyword_search: { type: 'string' }, limit: { type: 'integer', maximum: 100, default: 25 } },
            anyOf: [{ required: ['semantic_search'] }, { required: ['keyword_search'] }],
            additionalProperties: false,
          },
          response: { about: 'Matching episodes.', key: 'data', fields: [{ name: 'id', type: 'string' }] },
        },
        { id: 'podcasts/episodes', name: 'Episode details', description: 'One episode by id.', creditsCost: 5, options: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } },
      ],
    },
    {
      id: 'acme',
      name: 'Acme companies',
      domains: ['acme.test'],
      capabilities: [{ id: 'company/lookup', name: 'Company lookup', description: 'Company facts by domain.', creditsCost: 3, endpoint: 'http://10.0.0.5/lookup', timeoutMs: 5000 }],
      allowPrivateNetwork: true,
    },
    { id: 'docs', name: 'Docs mirror', capabilities: [{ id: 'site/map', name: 'Map the docs', description: 'URLs of the docs site.', creditsCost: 1, builtin: 'map' }] },
  ],
};

describe('domains', { timeout: 30_000 }, () => {
  test('declared domains are normalised; a page on a subdomain matches, a look-alike does not', () => {
    assert.equal(normalizeDomain('*.Example.COM.'), 'example.com');
    assert.equal(normalizeDomain('https://open.spotify.com/show/1'), 'open.spotify.com');
    assert.equal(normalizeDomain('not a domain'), null);
    assert.deepEqual(hostCandidates('https://a.b.example.com:8443/x'), ['a.b.example.com', 'b.example.com', 'example.com']);
    assert.ok(matchesDomain('https://www.acme.test/about', ['acme.test']));
    assert.ok(!matchesDomain('https://notacme.test/', ['acme.test']));
    assert.ok(!matchesDomain('https://acme.test.evil.com/', ['acme.test']));
    assert.deepEqual(urlsInText('tools for https://x.example/a and acme.test please'), ['https://x.example/a', 'https://acme.test']);
  });
});

describe('catalog file', { timeout: 30_000 }, () => {
  test('capabilities inherit their provider’s endpoint, domains and categories; builtins get their schema', async () => {
    const es = await entriesOfFile(FILE);
    assert.equal(es.length, 4);
    const search = es.find((e) => e.capability === 'podcasts/episodes/search')!;
    assert.deepEqual(search.target, { kind: 'http', url: 'https://particle.example/wds' });
    assert.deepEqual(search.domains, ['podcasts.apple.com', 'open.spotify.com']);
    assert.deepEqual(search.categories, ['podcasts']);
    const acme = es.find((e) => e.provider === 'acme')!;
    assert.deepEqual(acme.target, { kind: 'http', url: 'http://10.0.0.5/lookup', timeoutMs: 5000, allowPrivateNetwork: true });
    const map = es.find((e) => e.provider === 'docs')!;
    assert.deepEqual(map.target, { kind: 'builtin', operation: 'map' });
    assert.deepEqual((map.optionsSchema as { required: string[] }).required, ['url']);
  });
  test('every problem is reported and nothing is returned', async () => {
    const bad = structuredClone(FILE) as any;
    bad.providers[0].capabilities[1].options = { type: 'object', properties: { id: { type: 'nonsense' } } };
    bad.providers[1].capabilities[0].endpoint = undefined;
    bad.providers[2].capabilities.push({ id: 'site/map', name: 'x', description: 'x', creditsCost: 1, builtin: 'map' });
    bad.providers.push({ id: 'wds', name: 'Mine', capabilities: [{ id: 'scrape', name: 'x', description: 'x', creditsCost: 1, builtin: 'scrape' }] });
    await assert.rejects(entriesOfFile(bad), (e: Error) => {
      assert.match(e.message, /particle\/podcasts\/episodes: options: Invalid JSON Schema/);
      assert.match(e.message, /acme\/company\/lookup: no endpoint/);
      assert.match(e.message, /docs\/site\/map: declared twice/);
      assert.match(e.message, /wds\/scrape: the name of a built-in/);
      return true;
    });
    await assert.rejects(entriesOfFile({ providers: [{ id: 'p', name: 'P', capabilities: [{ id: 'c', name: 'c', description: 'c', creditsCost: -1, endpoint: 'ftp://x' }] }] }), /creditsCost|endpoint/);
  });
  test('a provider’s data terms go with each of its capabilities; terms need a version and an http(s) url; the catalogue’s own tools are not operator builtins', async () => {
    const withTerms = structuredClone(FILE) as any;
    withTerms.providers[0].terms = { version: '2026-01', url: 'https://particle.example/terms' };
    const es = await entriesOfFile(withTerms);
    assert.deepEqual(es.filter((e) => e.provider === 'particle').map((e) => e.terms), [{ version: '2026-01', url: 'https://particle.example/terms' }, { version: '2026-01', url: 'https://particle.example/terms' }]);
    assert.equal(es.find((e) => e.provider === 'acme')!.terms, undefined);
    withTerms.providers[0].terms = { version: '', url: 'javascript:alert(1)' };
    await assert.rejects(entriesOfFile(withTerms), /terms\.version[\s\S]*terms\.url|terms\.url[\s\S]*terms\.version/);
    const selfBuiltin = structuredClone(FILE) as any;
    selfBuiltin.providers[2].capabilities[0].builtin = 'terms-accept';
    await assert.rejects(entriesOfFile(selfBuiltin), /builtin/);
    assert.deepEqual(BUILTIN_ENTRIES.filter((e) => e.provider === 'firecrawl').map((e) => [e.capability, e.creditsCost]), [['find-tools', 0], ['terms/show', 0], ['terms/accept', 0]]);
  });
});

const FILE_ENTRIES = await entriesOfFile(FILE);

describe('contracts and discovery', { timeout: 30_000 }, () => {
  const entries = [...BUILTIN_ENTRIES, ...FILE_ENTRIES];
  const search = entries.find((e) => e.capability === 'podcasts/episodes/search')!;
  test('compact / summary / full detail levels (the SDK’s DiscoveredTool)', () => {
    assert.deepEqual(Object.keys(toolContract(search, 'compact')).sort(), ['capability', 'description', 'id', 'name', 'provider']);
    const summary = toolContract(search, 'summary');
    assert.equal(summary.creditsCost, 15);
    assert.equal(summary.options, undefined);
    assert.deepEqual(summary.next, { provider: 'firecrawl', capability: 'find-tools', options: { providers: ['particle'], capabilities: ['podcasts/episodes/search'], level: 'tools', expand: ['options', 'response', 'examples'] } });
    const full = toolContract(search, 'full');
    assert.deepEqual(full.options![0], { name: 'semantic_search', type: 'string', about: 'What was talked about.' });
    assert.deepEqual(full.options![2], { name: 'limit', type: 'integer', default: 25, max: 100 });
    assert.deepEqual(full.requiresOneOf, [['semantic_search'], ['keyword_search']]);
    assert.equal(full.response?.key, 'data');
    assert.match(full.examples!.curl!, /"alexandria":\{"provider":"particle"/);
    assert.equal(full.next, undefined);
  });
  test('find-tools walks providers → groups → tools, pages with next', () => {
    const top = findTools(entries, {});
    assert.equal(top.level, 'providers');
    assert.deepEqual(top.items.map((i) => i.id), ['wds', 'firecrawl', 'particle', 'acme', 'docs']);
    const p = findTools(entries, top.items[2]!.next!.options);
    assert.equal(p.level, 'tools');
    assert.deepEqual(p.items.map((i) => i.id), ['particle/podcasts/episodes/search', 'particle/podcasts/episodes']);
    assert.deepEqual(p.items[0]!.execute, { provider: 'particle', capability: 'podcasts/episodes/search' });
    const groups = findTools(entries, { level: 'groups' });
    assert.ok(groups.items.some((g) => g.id === 'particle/podcasts'));
    const page1 = findTools(entries, { level: 'tools', limit: 3 });
    assert.equal(page1.items.length, 3);
    assert.equal(page1.total, entries.length);
    const page2 = findTools(entries, page1.next!.options);
    assert.deepEqual(page2.items.map((i) => i.id), entries.slice(3, 6).map((e) => `${e.provider}/${e.capability}`));
    const byUrl = findTools(entries, { urls: ['https://podcasts.apple.com/us/podcast/x'], expand: ['options'] });
    assert.deepEqual(byUrl.items.map((i) => i.id), ['particle/podcasts/episodes/search', 'particle/podcasts/episodes']);
    assert.deepEqual(byUrl.items[0]!.matchedBy, ['domain']);
    assert.ok(Array.isArray(byUrl.items[0]!.options));
  });
  test('tool search by words ranks name and path above description, leaves non-matches out', () => {
    assert.deepEqual(rankByQuery(entries, 'podcast episodes about AI agents').map((e) => e.capability), ['podcasts/episodes/search', 'podcasts/episodes']);
    assert.deepEqual(rankByQuery(entries, 'company facts').map((e) => e.capability), ['company/lookup']);
    assert.deepEqual(rankByQuery(entries, 'zebra'), []);
  });
  test('fingerprint: key order does not matter, values and call order do', () => {
    const a = requestFingerprint([{ provider: 'p', capability: 'c', options: { a: 1, b: { x: 1, y: 2 } } }]);
    assert.equal(a, requestFingerprint([{ provider: 'p', capability: 'c', options: { b: { y: 2, x: 1 }, a: 1 } }]));
    assert.notEqual(a, requestFingerprint([{ provider: 'p', capability: 'c', options: { a: 2, b: { x: 1, y: 2 } } }]));
  });
});
