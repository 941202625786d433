import type { PageHistory, PageVersion } from '@wds/db';
import { classifyFetch } from './classify';

/**
 * What one observation of a page means against its history — pure, no I/O. The rules
 * (README "Statuses"):
 * - no version yet: `new` (a page that answers 404/410 is `removed`);
 * - the latest version has content: same normalized markdown (or the fetch proved it unchanged:
 *   304, identical body) → `same`; other markdown → `changed`; 404/410 → `removed`;
 * - the latest version is a removal: still gone → `same`; content again → `new`;
 * - a failed fetch (5xx, 429, 401/403, another 4xx, a bot-check page, an empty page where there
 *   was content) → `failed`: nothing is compared, the version stays what it was.
 */
export type Observation =
  | { kind: 'page'; statusCode: number; markdownHash: string; empty: boolean; markdown: string; title?: string }
  /** The caller proved the page unchanged before converting it (a 304, or the body's hash equals the latest version's). */
  | { kind: 'unchanged'; statusCode: number }
  | { kind: 'failed'; statusCode?: number; error: string };

export type Decision =
  | { outcome: 'new' | 'changed'; write: 'version'; status: 'ok' }
  | { outcome: 'removed'; write: 'version'; status: 'removed' }
  | { outcome: 'same'; write: 'seen'; checkStatus: 'ok' | 'removed' }
  | { outcome: 'failed'; write: 'failed' | 'none'; reason: string };

export function decide(baseline: PageVersion | null, o: Observation): Decision {
  if (o.kind === 'failed') return failed(baseline, o.error);
  if (o.kind === 'unchanged') {
    if (baseline?.status !== 'ok') return failed(baseline, 'the fetch answered "not modified" but no earlier version with content is known');
    return { outcome: 'same', write: 'seen', checkStatus: 'ok' };
  }
  const c = classifyFetch({ statusCode: o.statusCode, markdown: o.empty ? '' : o.markdown, title: o.title, baselineHasContent: baseline?.status === 'ok' });
  if (c.kind === 'failed') return failed(baseline, c.reason);
  if (c.kind === 'removed') {
    if (baseline?.status === 'removed') return { outcome: 'same', write: 'seen', checkStatus: 'removed' };
    return { outcome: 'removed', write: 'version', status: 'removed' };
  }
  if (!baseline || baseline.status === 'removed') return { outcome: 'new', write: 'version', status: 'ok' };
  if (baseline.markdownHash === o.markdownHash) return { outcome: 'same', write: 'seen', checkStatus: 'ok' };
  return { outcome: 'changed', write: 'version', status: 'ok' };
}

const failed = (baseline: PageVersion | null, reason: string): Decision => ({ outcome: 'failed', write: baseline ? 'failed' : 'none', reason });

/**
 * When the version compared with was last scraped. A retried observation that already moved
 * the version's sighting (last_source is its own key) answers the sighting before its own.
 */
export function previousScrapeAt(h: PageHistory | undefined, sourceKey: string): Date | null {
  const b = h?.baseline;
  if (!b) return null;
  return b.lastSource === sourceKey ? (b.prevSeenAt ?? b.lastSeenAt) : b.lastSeenAt;
}
