import { forgetInLogs } from '@wds/log';

/** How long after its activity a URL stays hidden: the SDK logs a failure after the activity returns. */
const AFTER_MS = 60_000;

/**
 * Zero-data-retention and lockdown scrapes: their URL must not appear in any log line of this
 * worker (an error message, a failure the SDK logs). Returns the release to call when the
 * activity ends; the URL stays hidden a minute longer.
 */
export function hideUrlFromLogs(o: { url: string; zeroDataRetention?: boolean; lockdown?: boolean }): () => void {
  if (!o.zeroDataRetention && !o.lockdown) return () => {};
  const values = [o.url];
  try {
    const u = new URL(o.url);
    values.push(u.href);
    if (u.pathname.length > 1 || u.search) values.push(`${u.pathname}${u.search}`);
  } catch {
    // validated by the API; nothing more to derive
  }
  const release = forgetInLogs(values);
  return () => void setTimeout(release, AFTER_MS).unref();
}
