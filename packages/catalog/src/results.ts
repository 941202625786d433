import type { CallError, CallResult, CatalogCall } from './types';

/** One entry of `data.alexandria` (the JS SDK's AlexandriaScrapeResult): the call's data and what it cost… */
export function callSuccess(call: Pick<CatalogCall, 'provider' | 'capability'>, data: unknown, creditsCost: number, extra: { upstreamStatus?: number; records?: number } = {}): CallResult {
  return { provider: call.provider, capability: call.capability, creditsCost, data, ...extra, recordedAt: new Date().toISOString() };
}

/** …or why it failed (failed calls are not billed, so they carry no chargeId). */
export function callError(call: Pick<CatalogCall, 'provider' | 'capability'>, code: string, message: string, status?: number): CallResult {
  const error: CallError = { code, message, ...(status ? { status } : {}) };
  return { provider: call.provider, capability: call.capability, error };
}
