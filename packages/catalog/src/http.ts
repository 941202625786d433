import type { Readable } from 'node:stream';
import { createAgent, isForbiddenAddress, mapNetworkError, readBody } from '@wds/fetch';
import { ScrapeCodes, WdsError } from '@wds/errors';
import { request, type Dispatcher } from 'undici';
import type { CallError, HttpTarget } from './types';

/**
 * Calls an operator's HTTP provider (README: Provider protocol): one POST of
 * `{provider, capability, options, requestId, callId}` as JSON, through the SSRF guard (the
 * address is checked after DNS, at connect time; undici's request follows no redirects), within the
 * timeout, the answer capped at `maxBytes`. `Idempotency-Key` is the call's id, the same on
 * every attempt, so a provider can answer a retried call from its first execution.
 *
 * A 2xx JSON answer is the call's `data`. Anything else is the call's error and is not retried
 * here: after a timeout or a dropped connection the provider may have executed the call.
 */
export interface ProviderCall {
  provider: string;
  capability: string;
  options: Record<string, unknown>;
  /** The catalog request's id (its scrape_id). */
  requestId: string;
  /** `<requestId>:<index>`: the idempotency key of this call. */
  callId: string;
}

export interface InvokeOptions {
  /** The deployment's WDS_ALLOW_PRIVATE_NETWORK; the target's own flag also allows it. */
  allowPrivateNetwork: boolean;
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
}

export type InvokeOutcome = { ok: true; status: number; data: unknown } | { ok: false; error: CallError };

const agents = new Map<boolean, Dispatcher>();
function agentFor(allowPrivate: boolean): Dispatcher {
  let a = agents.get(allowPrivate);
  if (!a) agents.set(allowPrivate, (a = createAgent({ rejectUnauthorized: true, isForbidden: allowPrivate ? null : isForbiddenAddress })));
  return a;
}

const fail = (code: string, message: string, status?: number): InvokeOutcome => ({ ok: false, error: { code, message, ...(status ? { status } : {}) } });

export async function invokeHttpProvider(target: HttpTarget, call: ProviderCall, o: InvokeOptions): Promise<InvokeOutcome> {
  const timeoutMs = Math.min(target.timeoutMs ?? o.timeoutMs, o.timeoutMs);
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = o.signal ? AbortSignal.any([timeout, o.signal]) : timeout;
  const url = new URL(target.url);
  try {
    const res = await request(url, {
      method: 'POST',
      body: JSON.stringify(call),
      headers: { ...(target.headers ?? {}), 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'WDS-Catalog/1.0', 'idempotency-key': call.callId },
      dispatcher: agentFor(o.allowPrivateNetwork || !!target.allowPrivateNetwork),
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const body = await readBody(res.body as unknown as Readable, {
      maxBytes: o.maxBytes,
      contentEncoding: header(res.headers['content-encoding']),
      contentLength: header(res.headers['content-length']),
      signal,
    });
    return interpret(res.statusCode, body);
  } catch (e) {
    if (timeout.aborted) return fail('provider_timeout', `The provider did not answer within ${timeoutMs} ms; it may have executed the call.`, 504);
    if (o.signal?.aborted) throw e;
    const mapped = mapNetworkError(e, url);
    if (mapped instanceof WdsError && mapped.kind === 'URL_BLOCKED') return fail('provider_blocked', `The provider's address is not allowed: ${mapped.message}`, 502);
    if (mapped instanceof WdsError) return fail(mapped.code === ScrapeCodes.BODY_TOO_LARGE ? 'provider_response_too_large' : 'provider_unreachable', mapped.message, 502);
    throw e;
  }
}

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : v);

/** A 2xx JSON body is the data; an error body `{error: {code, message}}` or `{code, error}` is relayed with the provider's status. */
function interpret(status: number, body: Buffer): InvokeOutcome {
  let json: unknown;
  try {
    json = body.length ? JSON.parse(body.toString('utf8')) : null;
  } catch {
    return status >= 200 && status < 300 ? fail('provider_invalid_response', 'The provider answered with a body that is not JSON.', 502) : fail('provider_error', `The provider answered ${status}.`, status);
  }
  if (status >= 200 && status < 300) return { ok: true, status, data: json };
  const e = (json && typeof json === 'object' ? json : {}) as { error?: unknown; code?: unknown; message?: unknown };
  const inner = e.error && typeof e.error === 'object' ? (e.error as { code?: unknown; message?: unknown }) : null;
  const code = typeof inner?.code === 'string' ? inner.code : typeof e.code === 'string' ? e.code : 'provider_error';
  const message = typeof inner?.message === 'string' ? inner.message : typeof e.error === 'string' ? e.error : typeof e.message === 'string' ? e.message : `The provider answered ${status}.`;
  return fail(code.slice(0, 100), message.slice(0, 2_000), status);
}
