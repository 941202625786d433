import type { CatalogCall, CatalogEntry, OptionContract, ToolContract, ToolDetail } from './types';

/**
 * What a caller sees of a capability: the JS SDK's DiscoveredTool, at three levels of detail
 * (Firecrawl's `toolDetail`): `compact` — identity and description; `summary` — plus price,
 * topics, when to use it and the `next` call that reads its full contract; `full` — plus the
 * options, the response contract and examples.
 */

export const toolId = (e: Pick<CatalogEntry, 'provider' | 'capability'>) => `${e.provider}/${e.capability}`;

type Schema = Record<string, unknown>;
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One entry per property of the options schema (the shape Firecrawl's contracts list). */
export function optionContracts(schema: Schema): OptionContract[] {
  const props = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(props).map(([name, raw]) => {
    const p = isObject(raw) ? raw : {};
    const type = Array.isArray(p.type) ? (p.type as string[]).join('|') : typeof p.type === 'string' ? p.type : 'any';
    const o: OptionContract = { name, type };
    if (required.has(name)) o.required = true;
    if (typeof p.description === 'string') o.about = p.description;
    if (p.default !== undefined) o.default = p.default;
    if (Array.isArray(p.enum)) o.enum = p.enum;
    const min = p.minimum ?? p.minLength ?? p.minItems;
    const max = p.maximum ?? p.maxLength ?? p.maxItems;
    if (typeof min === 'number') o.min = min;
    if (typeof max === 'number') o.max = max;
    return o;
  });
}

/** `anyOf`/`oneOf` branches that each require fields: "at least one of these sets" (Firecrawl's requiresOneOf). */
export function requiresOneOf(schema: Schema): string[][] | undefined {
  const branches = (schema.anyOf ?? schema.oneOf) as unknown;
  if (!Array.isArray(branches)) return undefined;
  const sets = branches.map((b) => (isObject(b) && Array.isArray(b.required) ? (b.required as string[]) : null));
  return sets.every((s): s is string[] => s !== null && s.length > 0) ? sets : undefined;
}

/** The find-tools call that returns this tool's full contract. */
export function contractCall(e: Pick<CatalogEntry, 'provider' | 'capability'>): CatalogCall {
  return { provider: 'firecrawl', capability: 'find-tools', options: { providers: [e.provider], capabilities: [e.capability], level: 'tools', expand: ['options', 'response', 'examples'] } };
}

export interface ContractParts {
  options?: boolean;
  response?: boolean;
  examples?: boolean;
}

export function toolContract(e: CatalogEntry, detail: ToolDetail | ContractParts = 'summary'): ToolContract {
  const t: ToolContract = { id: toolId(e), provider: e.provider, capability: e.capability, name: e.name, description: e.description };
  if (detail === 'compact') return t;
  t.creditsCost = e.creditsCost;
  t.perRecord = false;
  if (e.whenToUse) t.whenToUse = e.whenToUse;
  if (e.categories.length) {
    t.concept = e.categories[0];
    t.cohorts = [...e.categories];
  }
  const parts: ContractParts = detail === 'full' ? { options: true, response: true, examples: true } : detail === 'summary' ? {} : detail;
  if (parts.options) {
    t.options = optionContracts(e.optionsSchema);
    const oneOf = requiresOneOf(e.optionsSchema);
    if (oneOf) t.requiresOneOf = oneOf;
  }
  if (parts.response && e.response) t.response = e.response;
  if (parts.examples) t.examples = e.examples ?? { curl: curlExample(e) };
  if (!parts.options || !parts.response) t.next = contractCall(e);
  return t;
}

/** A ready-to-send request for a tool (find-tools `expand: ["examples"]` when the operator gave none). */
function curlExample(e: CatalogEntry): string {
  const required = optionContracts(e.optionsSchema).filter((o) => o.required);
  const options = Object.fromEntries(required.map((o) => [o.name, o.type === 'string' ? `<${o.name}>` : o.type === 'integer' || o.type === 'number' ? 1 : o.type === 'boolean' ? true : []]));
  const body = JSON.stringify({ alexandria: { provider: e.provider, capability: e.capability, options } });
  return `curl -X POST "$WDS_URL/v2/scrape" -H "Authorization: Bearer $WDS_API_KEY" -H "Content-Type: application/json" -H "x-request-id: $(uuidgen)" -d '${body}'`;
}

/** A contract matched to pages (domainTools): how it was found and for which URLs. */
export function matchedContract(e: CatalogEntry, detail: ToolDetail, by: 'semantic' | 'domain', urls: string[]): ToolContract {
  return { ...toolContract(e, detail), matchedBy: [by], matchedUrls: urls };
}

/** Joins matches of one tool found both ways (search: semantic and domain). */
export function mergeMatches(tools: ToolContract[]): ToolContract[] {
  const byId = new Map<string, ToolContract>();
  for (const t of tools) {
    const prior = byId.get(t.id);
    if (!prior) {
      byId.set(t.id, { ...t, matchedBy: [...(t.matchedBy ?? [])], matchedUrls: [...(t.matchedUrls ?? [])] });
      continue;
    }
    for (const m of t.matchedBy ?? []) if (!prior.matchedBy!.includes(m)) prior.matchedBy!.push(m);
    for (const u of t.matchedUrls ?? []) if (!prior.matchedUrls!.includes(u)) prior.matchedUrls!.push(u);
  }
  return [...byId.values()];
}
