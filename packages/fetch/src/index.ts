// Guarded fetching: URL in, bytes out, through the network guard. Nothing here parses HTML.
export type { FetchRequest, FetchedPage, DecodedBody } from './types';
export { fetchPage, createFetcher, configureHostOverrides, parseHostOverrides, processResolver, resolverWithOverrides, DEFAULT_USER_AGENT, type Fetcher, type FetcherOptions } from './fetch';
export { isForbiddenAddress, ipLiteral, ssrfBlockedError } from './ssrf';
export { createAgent, createConnector, systemResolver, type AddressPolicy, type ConnectorOptions, type Resolver } from './net/connector';
export { decodeBody, loadCharsets, normalizeCharset, charsetFromContentType, sniffMetaCharset } from './charset';
export { normalizeUrl, cacheKey, scrapeCacheKey, type CacheVariant } from './cache-key';
export { acceptLanguage } from './locale';
export { readBody, type ReadBodyOptions } from './net/body';
export { mapNetworkError } from './net/errors';
export { allowedUrls, assertUrlAllowed, threatModeProblem, threatUrlCheck, threatVerdict, unsafeUrlError, type ThreatPolicy, type ThreatRule } from './threat';
export { configureOriginGate, createOriginGate, originGate, type OriginBudgetStore, type OriginGate, type OriginTicket, type PolitenessConfig, type PolitenessHints, type PolitenessObserver, type RequestOutcome } from './politeness/gate';
export { limitsResolver, parseOriginLimits, type OriginLimit, type OriginLimitRule } from './politeness/limits';
export { parseRetryAfter } from './politeness/retry-after';
