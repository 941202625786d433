/**
 * What the redactor finds and how it replaces it. Kinds are the placeholders' names (`<EMAIL>`);
 * buckets are Firecrawl's `redactPII.entities` values, each covering one or more kinds.
 */
export const PII_KINDS = ['EMAIL', 'PHONE', 'CREDIT_CARD', 'IBAN', 'NATIONAL_ID', 'IP_ADDRESS', 'ADDRESS', 'PERSON', 'SECRET'] as const;
export type PiiKind = (typeof PII_KINDS)[number];

export const PII_BUCKETS = ['PERSON', 'EMAIL', 'PHONE', 'LOCATION', 'FINANCIAL', 'SECRET'] as const;
export type PiiBucket = (typeof PII_BUCKETS)[number];

/** Which kinds each of Firecrawl's entity buckets covers (README: "Entity buckets"). */
export const BUCKET_KINDS: Record<PiiBucket, readonly PiiKind[]> = {
  PERSON: ['PERSON', 'NATIONAL_ID'],
  EMAIL: ['EMAIL'],
  PHONE: ['PHONE'],
  LOCATION: ['ADDRESS', 'IP_ADDRESS'],
  FINANCIAL: ['CREDIT_CARD', 'IBAN'],
  SECRET: ['SECRET'],
};

/** Kinds whose detectors are format + checksum rules (the README's precision/recall targets apply to them). */
export const STRUCTURED_KINDS: readonly PiiKind[] = ['EMAIL', 'PHONE', 'CREDIT_CARD', 'IBAN', 'NATIONAL_ID', 'IP_ADDRESS', 'SECRET'];

/** Firecrawl's replaceStyle values, plus `hash` (ours): a keyed digest per value, stable within one key. */
export type ReplaceStyle = 'tag' | 'mask' | 'remove' | 'hash';

/**
 * `fast`: the deterministic detectors. `accurate` (Firecrawl's default): the same here, plus the
 * model pass when the caller runs one. `aggressive`: extra heuristics that raise recall at some
 * cost in precision (names after greetings, phone-like numbers without context, checksum ids
 * without a label).
 */
export type PiiMode = 'accurate' | 'aggressive' | 'fast';

export interface RedactOptions {
  mode?: PiiMode;
  /** Buckets to redact; absent = all. */
  entities?: readonly PiiBucket[];
  replaceStyle?: ReplaceStyle;
  /** Key of the `hash` style (HMAC-SHA256): the same value gets the same token under the same key. */
  hashKey?: string;
}

/** A detected span, [start, end) in UTF-16 code units of the input. */
export interface PiiSpan {
  kind: PiiKind;
  start: number;
  end: number;
}

export interface RedactResult {
  text: string;
  spans: PiiSpan[];
  /** Spans replaced, per kind. */
  counts: Partial<Record<PiiKind, number>>;
}
