export { normalizeMarkdown, markdownHash, hashText, hashBody, canonicalJson, jsonModeKey } from './normalize';
export { gitDiff } from './diff';
export { jsonChanges, jsonFieldChanges, type JsonChanges } from './json-diff';
export { classifyFetch, type FetchClass, type FetchedPage } from './classify';
export { decide, previousScrapeAt, type Decision, type Observation } from './compare';
export { conditionalHeaders, sameBody, validatorsOf } from './conditional';
export { prepareTracking, trackPages, siteOfKey, pageKeyOf, type ChangeMode, type PageObservation, type PageTracking, type TrackOptions } from './track';
