/**
 * What a fetch says about a page, before anything is compared. Upstream reports a page as
 * `removed` or `changed` whenever a captcha or an error page comes back; here only a real
 * "gone" answer removes a page, and a fetch that did not show the page is `failed`: it never
 * replaces the version compared with and never reports a change.
 */
export type FetchClass = { kind: 'ok' } | { kind: 'removed' } | { kind: 'failed'; reason: string };

/** Answers that say the page is gone. */
const GONE = new Set([404, 410]);

/**
 * Titles and texts of bot-check and challenge pages (Cloudflare, Akamai, DataDome, PerimeterX,
 * hCaptcha/reCAPTCHA walls). Matched only on short pages: a long article that mentions a
 * captcha is still an article.
 */
const BLOCK_PAGE = [
  /^\s*just a moment\.{0,3}\s*$/im,
  /attention required!? \| cloudflare/i,
  /checking (if the site connection is secure|your browser before accessing)/i,
  /enable javascript and cookies to continue/i,
  /verify(ing)? (that )?you are (a )?human/i,
  /please (complete|solve) the (security check|captcha)/i,
  /access to this page has been denied/i,
  /\bcf-chl-|\bg-recaptcha\b|\bh-captcha\b|captcha-delivery\.com/i,
  /pardon our interruption/i,
  /request unsuccessful\. incapsula incident id/i,
];
const BLOCK_PAGE_MAX_CHARS = 3_000;

export interface FetchedPage {
  statusCode: number;
  /** The page's markdown (normalized or not). */
  markdown: string;
  title?: string;
  /** The version compared with has content: an empty answer where there was content is a failed render, not a change. */
  baselineHasContent?: boolean;
}

export function classifyFetch(p: FetchedPage): FetchClass {
  if (GONE.has(p.statusCode)) return { kind: 'removed' };
  if (p.statusCode >= 500) return { kind: 'failed', reason: `the page answered HTTP ${p.statusCode}` };
  if (p.statusCode === 429) return { kind: 'failed', reason: 'the site rate-limited the fetch (HTTP 429)' };
  if (p.statusCode === 401 || p.statusCode === 403 || p.statusCode === 407) return { kind: 'failed', reason: `the site refused the fetch (HTTP ${p.statusCode})` };
  if (p.statusCode >= 400) return { kind: 'failed', reason: `the page answered HTTP ${p.statusCode}` };
  const text = p.markdown.trim();
  if (text.length <= BLOCK_PAGE_MAX_CHARS && BLOCK_PAGE.some((r) => r.test(text) || (p.title ? r.test(p.title) : false))) {
    return { kind: 'failed', reason: 'a bot-check or captcha page came back instead of the page' };
  }
  if (!text && p.baselineHasContent) return { kind: 'failed', reason: 'the page came back empty' };
  return { kind: 'ok' };
}
