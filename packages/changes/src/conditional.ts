import type { PageVersion } from '@wds/db';

/**
 * The cheap paths of an unchanged page, for callers that fetch the page themselves (monitor
 * checks): ask the site whether it changed at all (a 304 costs no body), and when it sends the
 * body anyway, compare its bytes with the latest version's before converting anything. Either
 * proof is reported as an `unchanged` observation (track.ts). Both hold only when the page is
 * converted with the same options each time (a monitor's are fixed).
 */

/** `If-None-Match` / `If-Modified-Since` from the latest version with content; empty when there is none. */
export function conditionalHeaders(latest: PageVersion | null | undefined): Record<string, string> {
  if (!latest || latest.status !== 'ok') return {};
  const h: Record<string, string> = {};
  if (latest.etag) h['If-None-Match'] = latest.etag;
  if (latest.lastModified) h['If-Modified-Since'] = latest.lastModified;
  return h;
}

/** Whether the fetched body is byte for byte the latest version's (see hashBody). */
export function sameBody(latest: PageVersion | null | undefined, bodyHash: string | null | undefined): boolean {
  return !!latest && latest.status === 'ok' && !!bodyHash && latest.bodyHash === bodyHash;
}

/** A fetch's validators, as stored with the version (header names in any case). */
export function validatorsOf(headers: Record<string, string | string[] | undefined>): { etag: string | null; lastModified: string | null } {
  const get = (name: string) => {
    const k = Object.keys(headers).find((h) => h.toLowerCase() === name);
    const v = k ? headers[k] : undefined;
    return (Array.isArray(v) ? v[0] : v)?.slice(0, 512) ?? null;
  };
  return { etag: get('etag'), lastModified: get('last-modified') };
}
