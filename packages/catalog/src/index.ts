// The catalog of provider capabilities (catalog mode of POST /v2/scrape, domainTools, tool search).
export * from './types';
export { BUILTIN_ENTRIES, builtinEntry, builtinOptionsSchema } from './builtins';
export { contractCall, matchedContract, mergeMatches, optionContracts, requiresOneOf, toolContract, toolId } from './contracts';
export { hostCandidates, matchesDomain, normalizeDomain, urlsInText } from './domains';
export { catalogFileSchema, entriesOfFile, type CatalogFile } from './file';
export { findTools, type FindToolsData, type FindToolsItem, type FindToolsOptions } from './find-tools';
export { invokeHttpProvider, type InvokeOptions, type InvokeOutcome, type ProviderCall } from './http';
export { canonicalJson, optionProblems, requestFingerprint } from './options';
export { rankByQuery } from './rank';
export { allEntries, entriesForUrls, importEntries, resolveEntry, rowOf } from './registry';
export { builtinRequest, reservationOf, type BuiltinRequest } from './builtin-requests';
export { callError, callSuccess } from './results';
export { acceptTerms, showTerms, termsGates, termsRequiredError, type TermsGate } from './terms';
