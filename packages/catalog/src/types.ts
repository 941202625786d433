/**
 * The catalog's shapes: what an operator declares (CatalogEntry, one per capability), what a
 * caller sees of it (ToolContract: the JS SDK's `DiscoveredTool`), and a call's outcome (the
 * SDK's `AlexandriaScrapeResult`).
 */

/** WDS operations a capability can run instead of calling an endpoint. */
export const BUILTIN_OPERATIONS = ['scrape', 'map', 'search', 'find-tools', 'terms-show', 'terms-accept'] as const;
export type BuiltinOperation = (typeof BUILTIN_OPERATIONS)[number];

export interface HttpTarget {
  kind: 'http';
  /** POSTed to with `{provider, capability, options, requestId, callId}` (README: Provider protocol). */
  url: string;
  /** Sent with every call (e.g. the provider's own credentials); never logged. */
  headers?: Record<string, string>;
  /** Per-call budget; the request's `timeout` caps it. */
  timeoutMs?: number;
  /** The operator's endpoint may sit on a private network (the SSRF guard still checks every other address). */
  allowPrivateNetwork?: boolean;
}

export interface BuiltinTarget {
  kind: 'builtin';
  operation: BuiltinOperation;
}

export type CatalogTarget = HttpTarget | BuiltinTarget;

/** A documented response field (Firecrawl's contract shape: `response.fields`). */
export interface ResponseField {
  name: string;
  type: string;
  about?: string;
}

export interface ResponseContract {
  about?: string;
  key?: string;
  fields?: ResponseField[];
}

/** One capability of one provider, as the catalog holds it. */
export interface CatalogEntry {
  provider: string;
  /** Provider-relative path (`company/search`). */
  capability: string;
  name: string;
  description: string;
  providerName: string;
  providerDescription?: string;
  whenToUse?: string;
  /** Coarse topics (`podcasts`, `companies`), for discovery filters. */
  categories: string[];
  /** Registrable hosts the tools apply to, lower case; a page on a subdomain matches too. */
  domains: string[];
  /** Credits one successful call costs (built-ins: the minimum; they bill what the operation costs). */
  creditsCost: number;
  /** JSON Schema of the call's `options` (validated with ajv before anything runs). */
  optionsSchema: Record<string, unknown>;
  response?: ResponseContract;
  /** Ready-to-send examples by language (`curl`, `javascript`, `python`). */
  examples?: Record<string, string>;
  /** The provider's third-party data terms: a team calls it only after accepting this version (terms.ts). */
  terms?: ProviderTerms;
  target: CatalogTarget;
}

/** A provider's data terms, as its catalog file declares them. */
export interface ProviderTerms {
  /** Changing it asks every team to accept again. */
  version: string;
  /** Where a person reads the terms. */
  url: string;
  /** A digest of the terms' text, when the operator publishes one; an acceptance that names a digest must match it. */
  digest?: string;
}

/** A catalog call as sent (`{provider, capability, options}`). */
export interface CatalogCall {
  provider: string;
  capability: string;
  options: Record<string, unknown>;
}

export interface OptionContract {
  name: string;
  type: string;
  required?: boolean;
  about?: string;
  default?: unknown;
  enum?: unknown[];
  min?: number;
  max?: number;
}

/** The JS SDK's DiscoveredTool (data.tools of a scrape or search; find-tools items at level tools). */
export interface ToolContract {
  id: string;
  provider: string;
  capability: string;
  name: string;
  description: string;
  creditsCost?: number;
  perRecord?: boolean;
  whenToUse?: string;
  concept?: string;
  cohorts?: string[];
  options?: OptionContract[];
  requiresOneOf?: string[][];
  response?: ResponseContract;
  examples?: Record<string, string>;
  matchedBy?: Array<'semantic' | 'domain'>;
  matchedUrls?: string[];
  next?: CatalogCall;
}

export type ToolDetail = 'compact' | 'summary' | 'full';

export interface CallError {
  code: string;
  message: string;
  status?: number;
  /** Set when credits were captured before the failure (never, here: failed calls are not billed). */
  chargeId?: string;
}

/** One entry of `data.alexandria`. */
export type CallResult =
  | { provider: string; capability: string; creditsCost: number; data: unknown; records?: number; upstreamStatus?: number; recordedAt: string }
  | { provider: string; capability: string; error: CallError };
