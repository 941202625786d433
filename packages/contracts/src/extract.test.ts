import assert from 'node:assert/strict';
import { test } from 'node:test';
import { webSearchQuery } from './extract';

test("extract's web search query: the prompt's subject words, without instruction words, punctuation or repeats", () => {
  assert.equal(webSearchQuery('Extract the founders and the funding rounds of Acme Corp. from their website!', undefined), 'founders funding rounds Acme Corp');
  assert.equal(webSearchQuery('Find the price of the "Rocket skates" — and the price of the anvil', undefined), 'price Rocket skates anvil');
  assert.equal(webSearchQuery('-secret words', undefined), 'secret words', 'no leading minus: it would exclude the word');
  assert.equal(webSearchQuery('Preise der Wasserkocher von Acme', undefined), 'Preise der Wasserkocher von Acme', 'other languages pass through');
});

test('without a prompt, the schema: property names split into words, titles, nested objects and arrays', () => {
  const schema = { type: 'object', properties: { companyName: { type: 'string' }, founded_year: { type: 'integer' }, products: { type: 'array', items: { type: 'object', title: 'Product', properties: { unitPrice: {} } } } } };
  assert.equal(webSearchQuery(undefined, schema), 'company Name founded year products Product unit Price');
  assert.equal(webSearchQuery('the prompt wins', schema), 'prompt wins');
});

test('nothing to search for, and at most 12 words', () => {
  assert.equal(webSearchQuery('Extract all the data from the page', undefined), '');
  assert.equal(webSearchQuery(undefined, { type: 'object' }), '');
  const long = Array.from({ length: 20 }, (_, i) => `word${i}`).join(' ');
  assert.equal(webSearchQuery(long, undefined).split(' ').length, 12);
});
