import { forgetInLogs, urlForms } from '@wds/log';

/** How long after its activity a URL stays hidden: the SDK logs a failure after the activity returns. */
const AFTER_MS = 60_000;

/**
 * Zero-data-retention and lockdown work: its URLs must not appear in any log line of this worker
 * (an error message, a failure the SDK logs) nor in a failure message Temporal stores
 * (toApplicationFailure drops them too). Returns the release to call when the activity ends; the
 * URLs stay hidden a minute longer.
 */
export function hideUrlFromLogs(o: { url: string; zeroDataRetention?: boolean; lockdown?: boolean }): () => void {
  if (!o.zeroDataRetention && !o.lockdown) return () => {};
  return hideUrlsFromLogs([o.url]);
}

/** hideUrlFromLogs for URLs known to need it (the pages of a zero-data-retention crawl). */
export function hideUrlsFromLogs(urls: Iterable<string>): () => void {
  const release = forgetInLogs([...urls].flatMap(urlForms));
  return () => void setTimeout(release, AFTER_MS).unref();
}
