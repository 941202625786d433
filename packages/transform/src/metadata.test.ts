import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadHtml } from './clean';
import { extractMetadata, metaKey } from './metadata';

const PAGE = 'https://example.com/news/story';

const DOC = `<!doctype html><html lang="pt-BR"><head>
  <meta charset="utf-8">
  <title>  The   Title </title>
  <meta name="description" content="A description">
  <meta name="keywords" content="a, b, c">
  <meta name="robots" content="index,follow">
  <meta property="og:title" content="OG title">
  <meta property="og:description" content="OG description">
  <meta property="og:url" content="https://example.com/og">
  <meta property="og:image" content="https://example.com/og.png">
  <meta property="og:locale" content="pt_BR">
  <meta property="og:locale:alternate" content="en_US">
  <meta property="og:locale:alternate" content="es_ES">
  <meta property="og:site_name" content="Example">
  <meta property="article:published_time" content="2024-01-02T03:04:05Z">
  <meta property="article:modified_time" content="2024-02-03T00:00:00Z">
  <meta property="article:tag" content="one">
  <meta property="article:tag" content="two">
  <meta name="DC.date.created" content="2024-01-01">
  <meta name="dcterms.subject" content="News">
  <meta name="twitter:card" content="summary">
  <meta itemprop="name" content="Item name">
  <meta http-equiv="X-UA-Compatible" content="IE=edge">
  <link rel="shortcut icon" href="/static/fav.ico">
</head><body><svg><title>icon tooltip</title></svg><p>x</p></body></html>`;

test('standard fields', () => {
  const m = extractMetadata(DOC, PAGE);
  assert.equal(m.title, 'The Title');
  assert.equal(m.description, 'A description');
  assert.equal(m.keywords, 'a, b, c');
  assert.equal(m.language, 'pt-BR');
  assert.equal(m.favicon, 'https://example.com/static/fav.ico');
  assert.equal(m.robots, 'index,follow');
});

test('Open Graph fields are camelCased; og:locale:alternate is an array', () => {
  const m = extractMetadata(DOC, PAGE);
  assert.equal(m.ogTitle, 'OG title');
  assert.equal(m.ogDescription, 'OG description');
  assert.equal(m.ogUrl, 'https://example.com/og');
  assert.equal(m.ogImage, 'https://example.com/og.png');
  assert.equal(m.ogLocale, 'pt_BR');
  assert.deepEqual(m.ogLocaleAlternate, ['en_US', 'es_ES']);
  assert.equal(m.ogSiteName, 'Example');
});

test('a single og:locale:alternate is still an array', () => {
  const m = extractMetadata('<meta property="og:locale:alternate" content="fr_FR">', PAGE);
  assert.deepEqual(m.ogLocaleAlternate, ['fr_FR']);
});

test('article times, Dublin Core, and other names kept as they are', () => {
  const m = extractMetadata(DOC, PAGE);
  assert.equal(m.publishedTime, '2024-01-02T03:04:05Z');
  assert.equal(m.modifiedTime, '2024-02-03T00:00:00Z');
  assert.equal(m.dcDateCreated, '2024-01-01');
  assert.equal(m.dcTermsSubject, 'News');
  assert.equal(m['twitter:card'], 'summary');
  assert.equal(m.name, 'Item name');
  assert.equal(m['X-UA-Compatible'], undefined, 'http-equiv is not a name');
});

test('a repeated meta name becomes an array in document order; identical repeats stay a string', () => {
  const m = extractMetadata(DOC, PAGE);
  assert.deepEqual(m['article:tag'], ['one', 'two']);
  const same = extractMetadata('<meta name="author" content="Ann"><meta name="author" content="Ann">', PAGE);
  assert.equal(same.author, 'Ann');
});

test('language is null without <html lang>; absent fields are omitted', () => {
  const m = extractMetadata('<html><head><title>T</title></head><body></body></html>', PAGE);
  assert.equal(m.language, null);
  assert.ok('language' in m);
  for (const k of ['description', 'favicon', 'ogTitle', 'ogLocaleAlternate', 'keywords']) assert.ok(!(k in m), k);
});

test('title falls back to og:title; favicon honours <base href>', () => {
  const m = extractMetadata('<html><head><base href="https://cdn.example.net/assets/"><meta property="og:title" content="From OG"><link rel="icon" href="f.png"></head></html>', PAGE);
  assert.equal(m.title, 'From OG');
  assert.equal(m.favicon, 'https://cdn.example.net/assets/f.png');
});

test('apple-touch-icon alone is not a favicon', () => {
  const m = extractMetadata('<link rel="apple-touch-icon" href="/a.png">', PAGE);
  assert.ok(!('favicon' in m));
});

test('accepts a parsed document', () => {
  assert.equal(extractMetadata(loadHtml(DOC), PAGE).title, 'The Title');
});

test('metaKey naming rule', () => {
  assert.equal(metaKey('og:title'), 'ogTitle');
  assert.equal(metaKey('OG:Image:Secure_URL'), 'ogImageSecureUrl');
  assert.equal(metaKey('og:locale:alternate'), 'ogLocaleAlternate');
  assert.equal(metaKey('article:published_time'), 'publishedTime');
  assert.equal(metaKey('article:section'), 'article:section');
  assert.equal(metaKey('DC.Title'), 'dcTitle');
  assert.equal(metaKey('DCTERMS.created'), 'dcTermsCreated');
  assert.equal(metaKey('Description'), 'description');
  assert.equal(metaKey('twitter:image'), 'twitter:image');
  assert.equal(metaKey('viewport'), 'viewport');
});
