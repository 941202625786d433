import { classifyBody, mimeOf, type PageContent } from '@wds/documents';
import { decodeBody } from '@wds/fetch';
import { looksClientRenderedAsync } from '@wds/transform';

/**
 * How the HTTP engine sees a fetched page: `script` — a successful HTML page whose markup looks
 * like a script-rendered shell (the browser should render it); `static` — HTML that stands as
 * fetched; `other` — error pages (4xx/5xx are answers, not shells) and non-HTML bodies. The
 * markup is examined on a transform thread (when the process has them) within the request's
 * remaining time: a hostile page costs that thread, never this process's event loop.
 */
export type PageRendering = 'script' | 'static' | 'other';

export async function pageRendering(page: PageContent, timeoutMs: number): Promise<PageRendering> {
  if (page.statusCode >= 400) return 'other';
  if (classifyBody(mimeOf(page.contentTypeHeader), page.body) !== 'html') return 'other';
  return (await looksClientRenderedAsync(decodeBody(page.body, page.contentTypeHeader).text, timeoutMs)) ? 'script' : 'static';
}

/** The HTTP engine's escalation test: the page looks script-rendered (see pageRendering). */
export async function clientRenderedPage(page: PageContent, timeoutMs: number): Promise<boolean> {
  return (await pageRendering(page, timeoutMs)) === 'script';
}
