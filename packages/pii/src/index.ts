// @wds/pii — deterministic PII redaction (README.md). Pure: no I/O, no environment.
export { redact, findPii, applySpans, redactValues, replacement, kindsOf } from './redact';
export { PII_KINDS, PII_BUCKETS, BUCKET_KINDS, STRUCTURED_KINDS } from './types';
export type { PiiKind, PiiBucket, PiiMode, PiiSpan, ReplaceStyle, RedactOptions, RedactResult } from './types';
export { piiOptionsOf, wantsModelPass, type RedactPiiRequest } from './options';
