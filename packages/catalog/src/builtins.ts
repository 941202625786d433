import type { BuiltinOperation, CatalogEntry } from './types';

/**
 * Capabilities every deployment has, without configuration: WDS's own scrape, map and search
 * (provider `wds`), and the catalogue's meta tool `firecrawl/find-tools`, which the JS SDK's
 * `findTools()` calls under exactly that name. Built-ins bill what the operation costs in its own
 * endpoint (a scrape 1 credit per page, a PDF 1 per parsed page; search 2 per 10 results; map 1);
 * `creditsCost` is the minimum, reserved before the call.
 */

const url = { type: 'string', format: 'uri', description: 'Absolute http(s) URL.' };

const scrapeOptions = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { ...url, description: 'The page to scrape (absolute http(s) URL).' },
    formats: {
      type: 'array',
      description: 'Output formats (model-free ones only). Default ["markdown"].',
      items: { type: 'string', enum: ['markdown', 'html', 'rawHtml', 'links', 'images', 'product', 'menu'] },
      maxItems: 7,
    },
    onlyMainContent: { type: 'boolean', description: 'Drop headers, navigation and footers. Default true.' },
    includeTags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 500 }, maxItems: 100, description: 'CSS selectors to keep.' },
    excludeTags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 500 }, maxItems: 100, description: 'CSS selectors to drop.' },
    waitFor: { type: 'integer', minimum: 0, maximum: 30000, description: 'Milliseconds to wait before capture.' },
  },
};

const mapOptions = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { ...url, description: 'The site to map.' },
    search: { type: 'string', maxLength: 500, description: 'Rank URLs matching these words first.' },
    limit: { type: 'integer', minimum: 1, maximum: 5000, description: 'Most URLs to return. Default 100.' },
    includeSubdomains: { type: 'boolean', description: 'Include subdomains of the site. Default true.' },
    sitemap: { type: 'string', enum: ['include', 'skip', 'only'], description: 'Use of the sitemap. Default include.' },
  },
};

const searchOptions = {
  type: 'object',
  additionalProperties: false,
  required: ['query'],
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 500, description: 'What to search for (websearch syntax).' },
    limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Most web results. Default 5.' },
    tbs: { type: 'string', maxLength: 100, description: 'Time filter (qdr:d, qdr:w, …).' },
    country: { type: 'string', pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2 country.' },
    includeDomains: { type: 'array', items: { type: 'string' }, maxItems: 50, description: 'Only results from these domains.' },
    excludeDomains: { type: 'array', items: { type: 'string' }, maxItems: 50, description: 'No results from these domains.' },
  },
  not: { required: ['includeDomains', 'excludeDomains'] },
};

const strings = (about: string) => ({ type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, maxItems: 50, description: about });

const findToolsOptions = {
  type: 'object',
  additionalProperties: false,
  properties: {
    query: { type: 'string', maxLength: 1000, description: 'Words describing the data wanted; ranks tools by their name and description.' },
    urls: { type: 'array', items: url, maxItems: 20, description: 'Pages whose domains the tools should cover.' },
    providers: strings('Provider ids.'),
    categories: strings('Categories.'),
    groups: strings('Capability groups (the first segment of a capability path).'),
    capabilities: strings('Capability paths.'),
    level: { type: 'string', enum: ['providers', 'groups', 'tools'], description: 'What to list; inferred from the selectors when absent.' },
    expand: { type: 'array', items: { type: 'string', enum: ['options', 'response', 'examples'] }, description: 'Contract parts to include on tools.' },
    limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Items per page. Default 20.' },
    offset: { type: 'integer', minimum: 0, description: 'Items to skip.' },
  },
};

const providerId = { type: 'string', minLength: 1, maxLength: 200, description: 'The provider whose terms these are.' };

const termsShowOptions = { type: 'object', additionalProperties: false, required: ['provider'], properties: { provider: providerId } };

const termsAcceptOptions = {
  type: 'object',
  additionalProperties: false,
  required: ['provider', 'version', 'confirmed'],
  properties: {
    provider: providerId,
    version: { type: 'string', minLength: 1, maxLength: 100, description: 'The version terms/show returned: the one the user read.' },
    digest: { type: ['string', 'null'], maxLength: 200, description: 'The digest terms/show returned (null when none is published).' },
    confirmed: { const: true, description: 'true: the user explicitly agreed to these terms.' },
  },
};

function builtin(
  provider: string,
  capability: string,
  operation: BuiltinOperation,
  fields: Pick<CatalogEntry, 'name' | 'description' | 'creditsCost' | 'optionsSchema' | 'categories'> & Partial<CatalogEntry>,
): CatalogEntry {
  return {
    provider,
    capability,
    providerName: provider === 'wds' ? 'WDS' : 'Firecrawl catalogue',
    providerDescription: provider === 'wds' ? "This deployment's own web data operations." : 'Discovery of the catalogue itself.',
    domains: [],
    target: { kind: 'builtin', operation },
    ...fields,
  };
}

export const BUILTIN_ENTRIES: readonly CatalogEntry[] = [
  builtin('wds', 'scrape', 'scrape', {
    name: 'Scrape a page',
    description: 'Fetches one page and returns it as markdown, HTML, links, images or its product/menu data.',
    whenToUse: 'You know the URL of the page that holds the data.',
    categories: ['web'],
    creditsCost: 1,
    optionsSchema: scrapeOptions,
    response: { about: "The page's document, as POST /v2/scrape returns it in URL mode.", fields: [{ name: 'markdown', type: 'string' }, { name: 'metadata', type: 'object' }] },
  }),
  builtin('wds', 'map', 'map', {
    name: 'Map a site',
    description: "Lists a website's URLs from its sitemaps, links and pages already seen.",
    whenToUse: 'You need to find which pages of a site hold the data.',
    categories: ['web'],
    creditsCost: 1,
    optionsSchema: mapOptions,
    response: { about: 'The URLs found.', key: 'links', fields: [{ name: 'links', type: 'array', about: '{url, title?} objects.' }] },
  }),
  builtin('wds', 'search', 'search', {
    name: 'Web search',
    description: "Searches the web (or this deployment's index of stored pages) and returns ranked results.",
    whenToUse: 'You do not know which pages hold the data.',
    categories: ['web', 'search'],
    creditsCost: 2,
    optionsSchema: searchOptions,
    response: { about: 'Web results.', key: 'web', fields: [{ name: 'web', type: 'array', about: '{url, title?, description?} objects.' }] },
  }),
  builtin('firecrawl', 'find-tools', 'find-tools', {
    name: 'Find Tools',
    description: 'Walks the catalogue: providers, groups, tools and their contracts. Free.',
    whenToUse: 'You want to know which tools exist and what they take, before running one.',
    categories: ['catalogue'],
    creditsCost: 0,
    optionsSchema: findToolsOptions,
    response: { about: 'One page of the catalogue.', fields: [{ name: 'level', type: 'string' }, { name: 'items', type: 'array' }, { name: 'total', type: 'number' }, { name: 'next', type: 'object' }] },
  }),
  builtin('firecrawl', 'terms/show', 'terms-show', {
    name: 'Show provider terms',
    description: "A provider's third-party data terms: version, where to read them, and whether this team accepted them. Free.",
    whenToUse: 'A call answered 403 THIRD_PARTY_DATA_TERMS_REQUIRED and the user should read the terms.',
    categories: ['catalogue'],
    creditsCost: 0,
    optionsSchema: termsShowOptions,
    response: { about: 'The terms.', fields: [{ name: 'provider', type: 'string' }, { name: 'version', type: 'string' }, { name: 'url', type: 'string' }, { name: 'digest', type: 'string|null' }, { name: 'accepted', type: 'boolean' }] },
  }),
  builtin('firecrawl', 'terms/accept', 'terms-accept', {
    name: 'Accept provider terms',
    description: "Records that this team accepted a provider's third-party data terms (the version shown by terms/show). Call it only after the user explicitly agreed. Free.",
    whenToUse: 'The user read and agreed to the terms terms/show returned.',
    categories: ['catalogue'],
    creditsCost: 0,
    optionsSchema: termsAcceptOptions,
    response: { about: 'The acceptance.', fields: [{ name: 'provider', type: 'string' }, { name: 'version', type: 'string' }, { name: 'accepted', type: 'boolean' }, { name: 'acceptedAt', type: 'string' }] },
  }),
];

export function builtinEntry(provider: string, capability: string): CatalogEntry | undefined {
  return BUILTIN_ENTRIES.find((e) => e.provider === provider && e.capability === capability);
}

/** The options schema of a built-in operation (operator entries that run one default to it). */
export function builtinOptionsSchema(op: BuiltinOperation): Record<string, unknown> {
  return BUILTIN_ENTRIES.find((e) => e.target.kind === 'builtin' && e.target.operation === op)!.optionsSchema;
}
