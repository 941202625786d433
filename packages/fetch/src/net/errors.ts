/**
 * Translation of low-level network failures (Node system errors, undici errors, TLS errors)
 * into WdsError, so callers and retry policies see stable kinds and codes instead of
 * platform-specific error strings.
 */
import { WdsError, ScrapeCodes } from '@wds/errors';

export function timeoutError(timeoutMs: number): WdsError {
  return new WdsError('REQUEST_TIMEOUT', {
    code: ScrapeCodes.TIMEOUT,
    message: `Request Timeout: the page did not load within ${timeoutMs} ms`,
    details: { timeoutMs },
  });
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA', 'ENODATA']);

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'EPIPE',
  'ETIMEDOUT',
  'EADDRNOTAVAIL',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** OpenSSL verification results that Node exposes as `err.code`. */
const TLS_VERIFY_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'HOSTNAME_MISMATCH',
]);

function isTlsCode(code: string): boolean {
  return (
    TLS_VERIFY_CODES.has(code) ||
    code.startsWith('CERT_') ||
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_')
  );
}

/** The first error in the `cause` chain satisfying `pred` (undici sometimes wraps). */
function findInChain<T>(err: unknown, pred: (e: unknown) => e is T): T | undefined {
  const seen = new Set<unknown>();
  for (let e = err; e != null && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    if (pred(e)) return e;
  }
  return undefined;
}

const isWds = (e: unknown): e is WdsError => e instanceof WdsError;
const hasCode = (e: unknown): e is NodeJS.ErrnoException =>
  typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string';

/**
 * Maps a failure of one HTTP exchange to a WdsError. Errors without a recognisable code are
 * returned unchanged: they are bugs, not network conditions, and must not be disguised as a 502.
 */
export function mapNetworkError(err: unknown, url: URL): unknown {
  const wds = findInChain(err, isWds);
  if (wds) return wds;
  const coded = findInChain(err, hasCode);
  if (!coded) return err;
  const code = coded.code as string;
  const host = url.hostname;

  if (DNS_CODES.has(code)) {
    return new WdsError('BAD_GATEWAY', {
      code: ScrapeCodes.DNS_RESOLUTION_ERROR,
      retryable: false,
      message: `DNS resolution failed for ${host}`,
      details: { host, cause: code },
      cause: err,
    });
  }
  if (isTlsCode(code) || (code === 'EPROTO' && url.protocol === 'https:')) {
    return new WdsError('BAD_GATEWAY', {
      code: ScrapeCodes.TLS_ERROR,
      retryable: false,
      message: `TLS error while connecting to ${host}: ${coded.message}`,
      details: { host, cause: code },
      cause: err,
    });
  }
  if (CONNECTION_CODES.has(code)) {
    return new WdsError('BAD_GATEWAY', {
      code: ScrapeCodes.CONNECTION_FAILED,
      retryable: true,
      message: `Connection to ${host} failed (${code})`,
      details: { host, cause: code },
      cause: err,
    });
  }
  if (code.startsWith('HPE_') || code === 'UND_ERR_INFO' || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    // The server answered, but not with valid HTTP; retrying the same server rarely helps.
    return new WdsError('BAD_GATEWAY', {
      retryable: false,
      message: `Invalid HTTP response from ${host}: ${coded.message}`,
      details: { host, cause: code },
      cause: err,
    });
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new WdsError('REQUEST_TIMEOUT', {
      code: ScrapeCodes.TIMEOUT,
      message: `Request Timeout: ${host} stopped responding`,
      cause: err,
    });
  }
  if (code === 'UND_ERR_INVALID_ARG' || code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') {
    return new WdsError('BAD_REQUEST', { message: `Invalid request: ${coded.message}`, cause: err });
  }
  return err;
}
