import type { AuthedKey } from '@wds/db';
import { WdsError } from '@wds/errors';

/**
 * Features the operator enables per team (`npm run keys -- flags`): a request that uses one its
 * team lacks is 403 (spec: "zero data retention active", Firecrawl: threat protection options on
 * a team without the feature). One place, whatever endpoint the field comes in on.
 */
export function checkTeamFeatures(auth: AuthedKey, o: { zeroDataRetention?: boolean; threatProtection?: unknown }): void {
  if (o.zeroDataRetention && !auth.flags.zeroDataRetention) {
    throw new WdsError('FORBIDDEN', { message: 'Forbidden: zero data retention is not enabled for this team. Ask the operator to enable it.', code: 'ZDR_NOT_ENABLED' });
  }
  if (o.threatProtection && !auth.flags.threatProtection) {
    throw new WdsError('FORBIDDEN', { message: 'Forbidden: threat protection overrides are not enabled for this team.', code: 'THREAT_PROTECTION_NOT_ENABLED' });
  }
}
