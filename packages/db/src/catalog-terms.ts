import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from './client';
import { catalogTermsAcceptances } from './schema/index';

/** Third-party data terms a team accepted, per provider (packages/catalog README: Terms). */

/** Records that `teamId` accepted `version` of `provider`'s terms (a later version replaces the earlier one). */
export async function acceptCatalogTerms(db: Db, teamId: string, provider: string, version: string): Promise<Date> {
  const [row] = await db
    .insert(catalogTermsAcceptances)
    .values({ teamId, provider, version })
    .onConflictDoUpdate({ target: [catalogTermsAcceptances.teamId, catalogTermsAcceptances.provider], set: { version, acceptedAt: new Date() } })
    .returning({ acceptedAt: catalogTermsAcceptances.acceptedAt });
  return row!.acceptedAt;
}

/** The version of each of `providers`' terms the team accepted (providers without an acceptance are absent). */
export async function acceptedCatalogTerms(db: Db, teamId: string, providers: string[]): Promise<Map<string, string>> {
  if (!providers.length) return new Map();
  const rows = await db
    .select({ provider: catalogTermsAcceptances.provider, version: catalogTermsAcceptances.version })
    .from(catalogTermsAcceptances)
    .where(and(eq(catalogTermsAcceptances.teamId, teamId), inArray(catalogTermsAcceptances.provider, [...new Set(providers)])));
  return new Map(rows.map((r) => [r.provider, r.version]));
}
