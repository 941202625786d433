import { attributeSelectorsOf, browserOnlyFeatures, changeTrackingIssues, changeTrackingOf, mediaWork, NO_LLM, unavailableFeatures, type Deployment, type ScrapeOptions } from '@wds/contracts';
import type { AuthedKey } from '@wds/db';
import { WdsError } from '@wds/errors';
import { compileUserSchema } from '@wds/llm';
import { validateSelectors } from '@wds/transform';
import { checkTeamFeatures } from './team-features';

type PolicyInput = ScrapeOptions & { domainTools?: boolean; url?: string };

/**
 * Checks after schema validation: selectors, team enablement (403) and features this deployment
 * lacks (400). Scrapes, crawls and batch scrapes (and search, whose result pages are a batch)
 * render pages that need it with the browser engine; `noBrowser` names a job kind whose pages
 * are fetched by the HTTP engine only (extract), where options only the browser serves are refused.
 */
export async function checkScrapePolicy(o: PolicyInput, auth: AuthedKey, deployment: Deployment = NO_LLM, noBrowser?: { jobKind: string }): Promise<void> {
  // A selector the cleaner cannot parse is the caller's mistake: say so before fetching anything.
  validateSelectors(o.includeTags, 'includeTags');
  validateSelectors(o.excludeTags, 'excludeTags');
  validateSelectors(attributeSelectorsOf(o.formats)?.map((s) => s.selector), 'attributes selector');
  checkTeamFeatures(auth, o, typeof o.url === 'string' ? [o.url] : []);
  if (o.domainTools && (!auth.flags.catalog || o.zeroDataRetention)) {
    throw new WdsError('FORBIDDEN', { message: 'Forbidden: domainTools needs catalog access enabled for the team and zero data retention off.', code: 'CATALOG_NOT_ENABLED' });
  }
  if (o.zeroDataRetention) checkZeroDataRetention(o);
  const missing = unavailableFeatures(o, deployment);
  if (noBrowser) {
    for (const field of browserOnlyFeatures(o)) {
      missing.push({
        field: field === 'screenshot' || field === 'branding' ? 'formats' : field,
        message: `'${field}' is not available for ${noBrowser.jobKind}: its pages are fetched without the browser engine. Use POST /v2/scrape, crawl or batch scrape for it.`,
      });
    }
  }
  // Media is extracted per single scrape: a crawl's, batch's or extract's pages (no `url` here) refuse it.
  if (typeof o.url !== 'string') {
    for (const t of mediaWork(o)) {
      missing.push({ field: 'formats', message: `Format '${t}' is not available for ${noBrowser?.jobKind ?? 'crawl and batch scrape'}: media is extracted per single scrape (POST /v2/scrape).` });
    }
  }
  if (missing.length) {
    throw new WdsError('FEATURE_NOT_AVAILABLE', {
      message: missing.map((m) => m.message).join(' '),
      code: 'FEATURE_NOT_AVAILABLE',
      details: missing,
    });
  }
  await checkLlmRequest(o);
}

/**
 * What zero data retention cannot give: results handed out as stored files (the `screenshot`,
 * `audio` and `video` formats, screenshot and pdf actions: links to files that outlive the
 * response) and a saved browser profile (the site's cookies and storage, kept for later).
 * Firecrawl refuses screenshots under ZDR with `SCRAPE_ZDR_VIOLATION_ERROR` (its docs list it as a
 * 500; a request that cannot be served as asked is a 400 here).
 */
function checkZeroDataRetention(o: PolicyInput): void {
  const details: { code: string; path: (string | number)[]; message: string }[] = [];
  o.formats.forEach((f, i) => {
    if (f.type === 'screenshot' || f.type === 'audio' || f.type === 'video') {
      details.push({ code: 'zdr_violation', path: ['formats', i], message: `the '${f.type}' format is returned as a link to a stored file, which zero data retention does not allow` });
    }
  });
  o.actions?.forEach((a, i) => {
    if (a.type === 'screenshot' || a.type === 'pdf') {
      details.push({ code: 'zdr_violation', path: ['actions', i], message: `a '${a.type}' action's result is a link to a stored file, which zero data retention does not allow` });
    }
  });
  if (o.profile?.saveChanges) {
    details.push({ code: 'zdr_violation', path: ['profile', 'saveChanges'], message: 'saving a browser profile keeps the site\'s cookies and storage; use saveChanges: false with zero data retention' });
  }
  if (details.length) {
    throw new WdsError('BAD_REQUEST', { code: 'SCRAPE_ZDR_VIOLATION_ERROR', message: `Zero data retention conflict: ${details.map((d) => d.message).join('; ')}.`, details });
  }
}

/**
 * Model-made formats, checked before anything is fetched: one object per format type (a page
 * has one `json`, one `answer`), a JSON Schema that compiles (spec: 422), and no cleaning pass
 * under zero data retention (spec: unsupported there).
 */
async function checkLlmRequest(o: PolicyInput): Promise<void> {
  const seen = new Set<string>();
  for (const [i, f] of o.formats.entries()) {
    if (!['json', 'question', 'highlights', 'summary', 'query'].includes(f.type)) continue;
    // `query` answers in `answer`, as `question` does: one of them per page.
    const slot = f.type === 'query' ? 'question' : f.type;
    if (seen.has(slot)) throw new WdsError('BAD_REQUEST', { details: [{ code: 'duplicate_format', path: ['formats', i], message: f.type === slot ? `formats may hold one '${f.type}' entry` : "formats may hold one of 'question' and 'query' (both answer in data.answer)" }] });
    seen.add(slot);
    const schema = (f as { schema?: unknown }).schema;
    if (f.type === 'json' && schema !== undefined) await compileUserSchema(schema);
  }
  const tracking = changeTrackingIssues(o);
  if (tracking.length) throw new WdsError('BAD_REQUEST', { details: tracking });
  const ct = changeTrackingOf(o);
  if (ct?.modes?.includes('json') && ct.schema !== undefined) await compileUserSchema(ct.schema);
  if (o.onlyCleanContent && o.zeroDataRetention) {
    throw new WdsError('BAD_REQUEST', { details: [{ code: 'unsupported', path: ['onlyCleanContent'], message: 'onlyCleanContent is not supported with zeroDataRetention: the page would be sent to the cleaning model' }] });
  }
}
