/**
 * One table of error kinds: HTTP status, the documented `error` string, and whether a
 * retry can help (used both by API clients and by Temporal retry policies).
 * Library code throws WdsError; the API renders it; activities convert it to an
 * ApplicationFailure whose `type` is the kind, so the API can rebuild it after Temporal.
 */
export const ERROR_KINDS = {
  BAD_REQUEST: { status: 400, error: 'Bad Request', retryable: false },
  INVALID_URL: { status: 400, error: 'Invalid URL', retryable: false },
  FEATURE_NOT_AVAILABLE: { status: 400, error: 'Feature not available', retryable: false },
  UNAUTHORIZED: { status: 401, error: 'Unauthorized: Invalid token', retryable: false },
  PAYMENT_REQUIRED: { status: 402, error: 'Payment Required: Insufficient credits', retryable: false },
  FORBIDDEN: { status: 403, error: 'Forbidden', retryable: false },
  URL_BLOCKED: { status: 403, error: 'URL blocked', retryable: false },
  NOT_FOUND: { status: 404, error: 'Not Found', retryable: false },
  REQUEST_TIMEOUT: { status: 408, error: 'Request Timeout', retryable: true },
  CONFLICT: { status: 409, error: 'Conflict', retryable: false },
  GONE: { status: 410, error: 'Gone', retryable: false },
  PAYLOAD_TOO_LARGE: { status: 413, error: 'Payload Too Large', retryable: false },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, error: 'Unsupported Media Type', retryable: false },
  UNPROCESSABLE: { status: 422, error: 'Unprocessable Entity', retryable: false },
  RATE_LIMITED: { status: 429, error: 'Rate limit exceeded', retryable: true },
  CONCURRENCY_LIMITED: { status: 429, error: 'Concurrency limit reached', retryable: true },
  INTERNAL: { status: 500, error: 'Internal Server Error', retryable: true },
  BAD_GATEWAY: { status: 502, error: 'Bad Gateway', retryable: true },
  SERVICE_UNAVAILABLE: { status: 503, error: 'Service Unavailable', retryable: true },
  GATEWAY_TIMEOUT: { status: 504, error: 'Gateway Timeout', retryable: true },
} as const;

export type ErrorKind = keyof typeof ERROR_KINDS;

/**
 * An out-of-band step the caller must take before the request can succeed (403
 * THIRD_PARTY_DATA_TERMS_REQUIRED: `{type: 'accept_terms', terms: <provider>, version, url}`).
 * The spec's error table calls `requiresAction` a boolean; both official SDKs (firecrawl-js
 * `parseRequiresAction`, firecrawl-py `RequiresAction.from_payload`) read this object and ignore a
 * boolean, so WDS sends the object: it is truthy wherever the spec's `true` is tested for.
 */
export interface RequiresAction {
  type: string;
  terms?: string;
  version?: string;
  url?: string;
}

export interface ErrorBody {
  success: false;
  error: string;
  details?: unknown;
  code?: string;
  chargeId?: string;
  requiresAction?: RequiresAction;
}

export interface WdsErrorInit {
  /** Replaces the table's `error` string (e.g. a more specific message). */
  message?: string;
  code?: string;
  details?: unknown;
  chargeId?: string;
  requiresAction?: RequiresAction;
  /** Overrides the table's retryability for this instance (e.g. a DNS failure is permanent). */
  retryable?: boolean;
  cause?: unknown;
}

export class WdsError extends Error {
  readonly kind: ErrorKind;
  readonly code?: string;
  readonly details?: unknown;
  readonly chargeId?: string;
  readonly requiresAction?: RequiresAction;
  readonly retryable: boolean;

  constructor(kind: ErrorKind, init: WdsErrorInit = {}) {
    const issues = isValidationKind(kind) && Array.isArray(init.details) ? (init.details as IssueLike[]) : undefined;
    super(init.message ?? (issues && kind === 'BAD_REQUEST' ? validationMessage(issues) : ERROR_KINDS[kind].error), { cause: init.cause });
    this.name = 'WdsError';
    this.kind = kind;
    // A per-field refusal is Firecrawl's validation envelope: `code: "BAD_REQUEST"` unless a more specific code is given.
    this.code = init.code ?? (issues ? VALIDATION_CODE : undefined);
    this.details = init.details;
    this.chargeId = init.chargeId;
    this.requiresAction = init.requiresAction;
    this.retryable = init.retryable ?? ERROR_KINDS[kind].retryable;
  }

  get status(): number {
    return ERROR_KINDS[this.kind].status;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { success: false, error: this.message };
    if (this.details !== undefined) body.details = this.details;
    if (this.code !== undefined) body.code = this.code;
    if (this.chargeId !== undefined) body.chargeId = this.chargeId;
    if (this.requiresAction !== undefined) body.requiresAction = this.requiresAction;
    return body;
  }

  /** Plain data form that survives serialization (Temporal failure details, logs). */
  toJSON(): SerializedWdsError {
    return {
      kind: this.kind,
      message: this.message,
      code: this.code,
      details: this.details,
      retryable: this.retryable,
    };
  }

  static fromJSON(s: SerializedWdsError): WdsError {
    return new WdsError(s.kind, { message: s.message, code: s.code, details: s.details, retryable: s.retryable });
  }
}

/** The `code` of a body that failed validation (Firecrawl's). */
export const VALIDATION_CODE = 'BAD_REQUEST';

/** Firecrawl's `error` for a body with keys no schema knows, whatever else is wrong with it. */
export const UNRECOGNIZED_KEYS_MESSAGE = 'Unrecognized key in body -- please review the v2 API documentation for request body changes';

/** The fields of a `details` entry (contracts' FieldIssue) that the envelope reads. */
interface IssueLike {
  code?: unknown;
  message?: unknown;
}

const isValidationKind = (kind: ErrorKind) => kind === 'BAD_REQUEST' || kind === 'INVALID_URL';

/**
 * The `error` string of a per-field refusal, as Firecrawl words it so that an SDK user reads the
 * reason ("waitFor must not exceed half of timeout") rather than "Bad Request": its sentence for
 * unrecognized keys if any issue is one, else the first issue's message when that issue is a
 * custom rule (built-in type/range issues keep "Bad Request", their text is in `details`).
 */
export function validationMessage(issues: readonly IssueLike[]): string {
  if (issues.some((i) => i?.code === 'unrecognized_keys')) return UNRECOGNIZED_KEYS_MESSAGE;
  const first = issues[0];
  if (first?.code === 'custom' && typeof first.message === 'string' && first.message) return first.message;
  return ERROR_KINDS.BAD_REQUEST.error;
}

export interface SerializedWdsError {
  kind: ErrorKind;
  message: string;
  code?: string;
  details?: unknown;
  retryable: boolean;
}

export function isErrorKind(x: unknown): x is ErrorKind {
  return typeof x === 'string' && Object.prototype.hasOwnProperty.call(ERROR_KINDS, x);
}

export function isWdsError(e: unknown): e is WdsError {
  return e instanceof WdsError;
}

/** The error a job's stored failure record (`{kind, message, code, details}`) stands for; an unknown kind is a 500. */
export function errorFromRecord(r: unknown): WdsError {
  const e = r as { kind?: string; message?: string; code?: string; details?: unknown } | null;
  return new WdsError(isErrorKind(e?.kind) ? e.kind : 'INTERNAL', { message: e?.message, code: e?.code, details: e?.details });
}

/** Anything thrown that is not a WdsError becomes a 500 without leaking internals. */
/** An error as one line for a reader who sees no status (a model's tool result, a page's stored `error`): its code first when it has one. */
export function codedMessage(e: WdsError): string {
  return e.code ? `${e.code}: ${e.message}` : e.message;
}

export function toWdsError(e: unknown): WdsError {
  if (e instanceof WdsError) return e;
  return new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', cause: e });
}

/** Scrape-specific codes from the spec's table, named once. */
export const ScrapeCodes = {
  NO_CACHED_DATA: 'SCRAPE_NO_CACHED_DATA',
  LOCKDOWN_CACHE_MISS: 'SCRAPE_LOCKDOWN_CACHE_MISS',
  TIMEOUT: 'SCRAPE_TIMEOUT',
  SSRF_BLOCKED: 'SCRAPE_SSRF_BLOCKED',
  DNS_RESOLUTION_ERROR: 'SCRAPE_DNS_RESOLUTION_ERROR',
  CONNECTION_FAILED: 'SCRAPE_CONNECTION_FAILED',
  TLS_ERROR: 'SCRAPE_TLS_ERROR',
  TOO_MANY_REDIRECTS: 'SCRAPE_TOO_MANY_REDIRECTS',
  BODY_TOO_LARGE: 'SCRAPE_BODY_TOO_LARGE',
  UNSUPPORTED_FORMAT: 'FEATURE_NOT_AVAILABLE',
} as const;
