import { classifyBody, mimeOf, type PageContent } from '@wds/documents';
import { decodeBody } from '@wds/fetch';
import { looksClientRendered } from '@wds/transform';

/**
 * The HTTP engine's escalation test: a successful HTML page whose markup looks like a
 * script-rendered shell. Error pages (4xx/5xx) stay as fetched: they are answers, not shells.
 */
export function clientRenderedPage(page: PageContent): boolean {
  if (page.statusCode >= 400) return false;
  if (classifyBody(mimeOf(page.contentTypeHeader), page.body) !== 'html') return false;
  return looksClientRendered(decodeBody(page.body, page.contentTypeHeader).text);
}
