import { classifyBody, mimeOf, type PageContent } from '@wds/documents';
import { decodeBody } from '@wds/fetch';
import { looksClientRenderedAsync } from '@wds/transform';

/**
 * The HTTP engine's escalation test: a successful HTML page whose markup looks like a
 * script-rendered shell. Error pages (4xx/5xx) stay as fetched: they are answers, not shells.
 * The markup is examined on a transform thread (when the process has them) within the request's
 * remaining time: a hostile page costs that thread, never this process's event loop.
 */
export async function clientRenderedPage(page: PageContent, timeoutMs: number): Promise<boolean> {
  if (page.statusCode >= 400) return false;
  if (classifyBody(mimeOf(page.contentTypeHeader), page.body) !== 'html') return false;
  return looksClientRenderedAsync(decodeBody(page.body, page.contentTypeHeader).text, timeoutMs);
}
