import { browserOnlyFeatures, changeTrackingIssues, changeTrackingOf, NO_LLM, unavailableFeatures, type Deployment, type ScrapeOptions } from '@wds/contracts';
import type { AuthedKey } from '@wds/db';
import { WdsError } from '@wds/errors';
import { compileUserSchema } from '@wds/llm';
import { validateSelectors } from '@wds/transform';

type PolicyInput = ScrapeOptions & { domainTools?: boolean; url?: string };

/**
 * Checks after schema validation: selectors, team enablement (403) and features this deployment
 * lacks (400). Scrapes, crawls and batch scrapes (and search, whose result pages are a batch)
 * render pages that need it with the browser engine; `noBrowser` names a job kind whose pages
 * are fetched by the HTTP engine only (extract), where options only the browser serves are refused.
 */
export function checkScrapePolicy(o: PolicyInput, auth: AuthedKey, deployment: Deployment = NO_LLM, noBrowser?: { jobKind: string }): void {
  // A selector the cleaner cannot parse is the caller's mistake: say so before fetching anything.
  validateSelectors(o.includeTags, 'includeTags');
  validateSelectors(o.excludeTags, 'excludeTags');
  if (o.zeroDataRetention && !auth.flags.zeroDataRetention) {
    throw new WdsError('FORBIDDEN', { message: 'Forbidden: zero data retention is not enabled for this team. Ask the operator to enable it.', code: 'ZDR_NOT_ENABLED' });
  }
  if (o.domainTools && (!auth.flags.catalog || o.zeroDataRetention)) {
    throw new WdsError('FORBIDDEN', { message: 'Forbidden: domainTools needs catalog access enabled for the team and zero data retention off.', code: 'CATALOG_NOT_ENABLED' });
  }
  if (o.threatProtection && !auth.flags.threatProtection) {
    throw new WdsError('FORBIDDEN', { message: 'Forbidden: threat protection overrides are not enabled for this team.', code: 'THREAT_PROTECTION_NOT_ENABLED' });
  }
  const missing = unavailableFeatures(o, deployment);
  if (noBrowser) {
    for (const field of browserOnlyFeatures(o)) {
      missing.push({
        field: field === 'screenshot' || field === 'branding' ? 'formats' : field,
        message: `'${field}' is not available for ${noBrowser.jobKind}: its pages are fetched without the browser engine. Use POST /v2/scrape, crawl or batch scrape for it.`,
      });
    }
  }
  if (missing.length) {
    throw new WdsError('FEATURE_NOT_AVAILABLE', {
      message: missing.map((m) => m.message).join(' '),
      code: 'FEATURE_NOT_AVAILABLE',
      details: missing,
    });
  }
  checkLlmRequest(o);
}

/**
 * Model-made formats, checked before anything is fetched: one object per format type (a page
 * has one `json`, one `answer`), a JSON Schema that compiles (spec: 422), and no cleaning pass
 * under zero data retention (spec: unsupported there).
 */
function checkLlmRequest(o: PolicyInput): void {
  const seen = new Set<string>();
  for (const [i, f] of o.formats.entries()) {
    if (!['json', 'question', 'highlights', 'summary'].includes(f.type)) continue;
    if (seen.has(f.type)) throw new WdsError('BAD_REQUEST', { details: [{ code: 'duplicate_format', path: ['formats', i], message: `formats may hold one '${f.type}' entry` }] });
    seen.add(f.type);
    const schema = (f as { schema?: unknown }).schema;
    if (f.type === 'json' && schema !== undefined) compileUserSchema(schema);
  }
  const tracking = changeTrackingIssues(o);
  if (tracking.length) throw new WdsError('BAD_REQUEST', { details: tracking });
  const ct = changeTrackingOf(o);
  if (ct?.modes?.includes('json') && ct.schema !== undefined) compileUserSchema(ct.schema);
  if (o.onlyCleanContent && o.zeroDataRetention) {
    throw new WdsError('BAD_REQUEST', { details: [{ code: 'unsupported', path: ['onlyCleanContent'], message: 'onlyCleanContent is not supported with zeroDataRetention: the page would be sent to the cleaning model' }] });
  }
}
