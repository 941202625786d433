import { conditionalHeaders, hashBody, sameBody, validatorsOf, type PageObservation } from '@wds/changes';
import type { ScrapeOptions } from '@wds/contracts';
import type { PageVersion } from '@wds/db';
import { codedMessage, toWdsError } from '@wds/errors';
import { fetchPage, threatUrlCheck } from '@wds/fetch';
import { buildPage, requestHeaders, type PageDeps } from '../scrape/pipeline';

/**
 * One page of a check, fetched as cheaply as its history allows: a conditional request
 * (If-None-Match / If-Modified-Since from the version compared with), then the body's hash
 * against that version's before anything is converted. Only a page whose bytes differ is
 * converted (the scrape engine's own build, with the target's options) and compared by markdown.
 */
export interface PageToObserve {
  url: string;
  /** The check page's id: the observation's source key, and the scrape id of its document. */
  pageId: string;
  options: ScrapeOptions;
  baseline: PageVersion | null;
  signal: AbortSignal;
  /** A crawl target's page reached from memory of earlier checks (no page links to it now). */
  hidden?: boolean;
}

export interface Observed {
  observation: PageObservation;
  /** The conversion's title, credits (a converted PDF's pages) — only for converted pages. */
  title?: string;
  credits: number;
  /** How the page was found unchanged, for the metric: 304, identical bytes, or converted. */
  path: 'not_modified' | 'same_body' | 'converted' | 'failed';
}

export async function observePage(deps: PageDeps, p: PageToObserve): Promise<Observed> {
  const o = p.options;
  const deadline = Date.now() + o.timeout;
  const base = { url: p.url, sourceKey: p.pageId, ...(p.hidden ? { visibility: 'hidden' as const } : {}) };
  let fetched;
  try {
    fetched = await fetchPage({
      url: p.url,
      headers: { ...requestHeaders(o), ...conditionalHeaders(p.baseline) },
      timeoutMs: o.timeout,
      skipTlsVerification: o.skipTlsVerification,
      allowPrivateNetwork: deps.allowPrivateNetwork,
      maxBodyBytes: deps.maxBodyBytes,
      signal: p.signal,
      // Threat protection (the target's scrapeOptions): the URL and every redirect hop, before each is requested.
      checkUrl: threatUrlCheck(o.threatProtection),
    });
  } catch (e) {
    return { observation: { ...base, kind: 'failed', error: codedMessage(toWdsError(e)) }, credits: 0, path: 'failed' };
  }
  const validators = validatorsOf(fetched.headers);
  if (fetched.statusCode === 304 && p.baseline?.status === 'ok') {
    return { observation: { ...base, kind: 'unchanged', statusCode: 304, ...validators }, credits: 1, path: 'not_modified' };
  }
  const bodyHash = hashBody(fetched.body);
  if (fetched.statusCode < 300 && sameBody(p.baseline, bodyHash)) {
    return { observation: { ...base, kind: 'unchanged', statusCode: fetched.statusCode, bodyHash, ...validators }, credits: 1, path: 'same_body' };
  }
  try {
    const built = await buildPage(
      { requestedUrl: p.url, finalUrl: fetched.finalUrl, statusCode: fetched.statusCode, contentTypeHeader: fetched.headers['content-type'] ?? '', body: fetched.body },
      { ...o, formats: [{ type: 'markdown' }] },
      { scrapeId: p.pageId, engine: 'http', cache: { state: 'miss' }, signal: p.signal, llm: false },
      deadline,
    );
    const md = built.document.markdown ?? '';
    const title = typeof built.document.metadata?.title === 'string' ? built.document.metadata.title : undefined;
    return {
      observation: { ...base, kind: 'page', statusCode: fetched.statusCode, markdown: md, ...(title ? { title } : {}), bodyHash, ...validators },
      ...(title ? { title } : {}),
      credits: built.creditsUsed,
      path: 'converted',
    };
  } catch (e) {
    return { observation: { ...base, kind: 'failed', statusCode: fetched.statusCode, error: toWdsError(e).message }, credits: 0, path: 'failed' };
  }
}
