import type { AuthedKey } from '@wds/db';
import { WdsError } from '@wds/errors';
import { assertUrlAllowed, threatModeProblem, type ThreatPolicy } from '@wds/fetch';

/**
 * Features the operator enables per team (`npm run keys -- flags`): a request that uses one its
 * team lacks is 403 (spec: "zero data retention active", Firecrawl: threat protection options on
 * a team without the feature). One place, whatever endpoint the field comes in on; `targets` are
 * the URLs the request names (its scrape target, crawl seed, batch, map, extract or agent URLs),
 * checked against the request's threat-protection lists before anything is fetched.
 */
export function checkTeamFeatures(auth: AuthedKey, o: { zeroDataRetention?: boolean; threatProtection?: ThreatPolicy | null }, targets: readonly string[] = []): void {
  if (o.zeroDataRetention && !auth.flags.zeroDataRetention) {
    throw new WdsError('FORBIDDEN', { message: 'Forbidden: zero data retention is not enabled for this team. Ask the operator to enable it.', code: 'ZDR_NOT_ENABLED' });
  }
  if (o.threatProtection && !auth.flags.threatProtection) {
    throw new WdsError('FORBIDDEN', { message: 'Forbidden: threat protection overrides are not enabled for this team.', code: 'THREAT_PROTECTION_NOT_ENABLED' });
  }
  if (!o.threatProtection) return;
  // What the policy asks that this deployment cannot run, then the request's own URLs (403 unsafe_domain_blocked).
  const problem = threatModeProblem(o.threatProtection);
  if (problem) throw problem;
  for (const url of targets) assertUrlAllowed(url, o.threatProtection);
}
