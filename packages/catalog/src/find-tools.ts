import { toolContract, toolId } from './contracts';
import { matchesDomain } from './domains';
import { rankByQuery } from './rank';
import type { CatalogCall, CatalogEntry, ToolContract } from './types';

/**
 * `firecrawl/find-tools` (the JS SDK's `findTools()`): one page of the catalogue at a level —
 * providers, groups (first segment of a capability path) or tools — filtered by the selectors,
 * each item with the `next` call that narrows to it, and the page's own `next` (same filters,
 * next offset) or null. Free; pure (the activity passes the catalog in).
 */
export interface FindToolsOptions {
  query?: string;
  urls?: string[];
  providers?: string[];
  categories?: string[];
  groups?: string[];
  capabilities?: string[];
  level?: 'providers' | 'groups' | 'tools';
  expand?: Array<'options' | 'response' | 'examples'>;
  limit?: number;
  offset?: number;
}

export interface FindToolsItem {
  id: string;
  name: string;
  next?: CatalogCall;
  execute?: { provider: string; capability: string };
  [k: string]: unknown;
}

export interface FindToolsData {
  level: 'providers' | 'groups' | 'tools';
  items: FindToolsItem[];
  total: number;
  next: CatalogCall | null;
}

const groupOf = (capability: string) => capability.split('/')[0]!;
const call = (options: FindToolsOptions): CatalogCall => ({ provider: 'firecrawl', capability: 'find-tools', options: { ...options } });

/** Selectors first, then the level: capabilities/groups/urls/query → tools; providers → groups when they have several, else tools. */
function levelOf(o: FindToolsOptions, matched: CatalogEntry[]): FindToolsData['level'] {
  if (o.level) return o.level;
  if (o.capabilities?.length || o.groups?.length || o.urls?.length || o.query) return 'tools';
  if (o.providers?.length) return new Set(matched.map((e) => groupOf(e.capability))).size > 1 ? 'groups' : 'tools';
  return 'providers';
}

function select(entries: readonly CatalogEntry[], o: FindToolsOptions): CatalogEntry[] {
  let out = entries.filter(
    (e) =>
      (!o.providers?.length || o.providers.includes(e.provider)) &&
      (!o.capabilities?.length || o.capabilities.includes(e.capability) || o.capabilities.includes(toolId(e))) &&
      (!o.groups?.length || o.groups.includes(groupOf(e.capability))) &&
      (!o.categories?.length || e.categories.some((c) => o.categories!.includes(c))) &&
      (!o.urls?.length || o.urls.some((u) => matchesDomain(u, e.domains))),
  );
  if (o.query?.trim()) out = rankByQuery(out, o.query);
  return out;
}

function providerItems(matched: CatalogEntry[]): FindToolsItem[] {
  const byProvider = new Map<string, CatalogEntry[]>();
  for (const e of matched) byProvider.set(e.provider, [...(byProvider.get(e.provider) ?? []), e]);
  return [...byProvider].map(([id, es]) => ({
    id,
    name: es[0]!.providerName,
    ...(es[0]!.providerDescription ? { description: es[0]!.providerDescription } : {}),
    categories: [...new Set(es.flatMap((e) => e.categories))],
    tools: es.length,
    next: call({ providers: [id] }),
  }));
}

function groupItems(matched: CatalogEntry[]): FindToolsItem[] {
  const byGroup = new Map<string, CatalogEntry[]>();
  for (const e of matched) byGroup.set(`${e.provider}/${groupOf(e.capability)}`, [...(byGroup.get(`${e.provider}/${groupOf(e.capability)}`) ?? []), e]);
  return [...byGroup].map(([id, es]) => ({
    id,
    name: groupOf(es[0]!.capability),
    provider: es[0]!.provider,
    tools: es.length,
    next: call({ providers: [es[0]!.provider], groups: [groupOf(es[0]!.capability)], level: 'tools' }),
  }));
}

function toolItems(matched: CatalogEntry[], o: FindToolsOptions): FindToolsItem[] {
  const expand = new Set(o.expand ?? []);
  return matched.map((e) => {
    const t: ToolContract = toolContract(e, { options: expand.has('options'), response: expand.has('response'), examples: expand.has('examples') });
    if (o.urls?.length) {
      t.matchedBy = ['domain'];
      t.matchedUrls = o.urls.filter((u) => matchesDomain(u, e.domains));
    }
    return { ...t, execute: { provider: e.provider, capability: e.capability } };
  });
}

export function findTools(entries: readonly CatalogEntry[], o: FindToolsOptions): FindToolsData {
  const matched = select(entries, o);
  const level = levelOf(o, matched);
  const all = level === 'providers' ? providerItems(matched) : level === 'groups' ? groupItems(matched) : toolItems(matched, o);
  const limit = o.limit ?? 20;
  const offset = o.offset ?? 0;
  const items = all.slice(offset, offset + limit);
  return { level, items, total: all.length, next: offset + limit < all.length ? call({ ...o, level, offset: offset + limit }) : null };
}

