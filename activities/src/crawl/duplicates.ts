import { createHash } from 'node:crypto';
import { crawlUrlKey } from '@wds/crawl';
import { claimFingerprints, type Db } from '@wds/db';
import type { PageResult } from '../scrape/pipeline';
import type { LoadedJob } from './job-options';

/**
 * Duplicate pages within a crawl (issue 32: "the same article under 12 URLs"). A page is a
 * duplicate when its title and text are exactly those of a page stored before (markdown, or html without it,
 * with link and image targets left out: session ids and tracking parameters in the links do not
 * make a page new) or when its `<link rel="canonical">` names another URL of the crawl that is
 * stored. A duplicate is not stored, billed or announced, its links are not followed, and
 * `GET /v2/crawl/{id}/errors` lists it under `duplicates` with the page it repeats.
 */
export async function duplicateOf(db: Db, job: LoadedJob, key: string, page: PageResult): Promise<string | null> {
  if (job.kind !== 'crawl') return null;
  const text = pageText(page);
  const fingerprints = text ? [`text:${createHash('sha256').update(text).digest('hex').slice(0, 32)}`] : [];
  return claimFingerprints(db, job.id, key, { fingerprints, canonicalKey: canonicalKeyOf(job, page) });
}

/**
 * What the text fingerprint is taken of: the page's title and text. Empty pages have none (they
 * are not each other's duplicates); pages that share a body under different titles are not one
 * page (a site's templates often repeat a body, e.g. an error or login text).
 */
export function pageText(page: Pick<PageResult, 'document'>): string {
  const d = page.document as { markdown?: unknown; html?: unknown; metadata?: { title?: unknown } };
  const raw = typeof d.markdown === 'string' ? d.markdown : typeof d.html === 'string' ? d.html.replace(/<[^>]*>/g, ' ') : '';
  const text = raw
    .replace(/\]\([^)]*\)/g, ']')
    .replace(/\s+/g, ' ')
    .trim();
  if (!text) return '';
  const title = d.metadata?.title;
  return `${Array.isArray(title) ? title.join(' ') : typeof title === 'string' ? title : ''}\n${text}`;
}

function canonicalKeyOf(job: LoadedJob, page: PageResult): string | null {
  if (!page.canonical) return null;
  try {
    return crawlUrlKey(page.canonical, job.crawl ?? {});
  } catch {
    return null;
  }
}
