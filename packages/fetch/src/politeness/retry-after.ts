/**
 * Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP date, as ms from `now`; null when
 * absent or unreadable (the exponential backoff applies then). A date in the past is 0.
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // Only the date forms, not whatever Date.parse would guess from (a bare number with a sign, "tomorrow").
  if (!/^[A-Za-z]{3},? /.test(v) && !/^[A-Za-z]+day, /.test(v)) return null;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
