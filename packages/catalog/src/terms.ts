import { acceptCatalogTerms, acceptedCatalogTerms, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';
import type { CatalogEntry } from './types';

/**
 * Third-party data terms (spec: Authentication rule 5). An operator's provider may declare
 * `terms` ({version, url, digest?}) in the catalog file; a team's calls to it run only after the
 * team accepted that version — with the built-in `firecrawl/terms/accept` (the JS SDK's shape:
 * `{provider, version, digest, confirmed: true}`) or the operator's `npm run catalog -- accept-terms`.
 * Until then a call answers 403 `THIRD_PARTY_DATA_TERMS_REQUIRED` with `requiresAction`
 * (`{type: 'accept_terms', terms: provider, version, url}`, the SDKs' shape) and, in `details`, what to accept and how; nothing runs. Discovery lists gated tools as usual.
 */

/** One provider whose terms stand between the team and a call. */
export interface TermsGate {
  type: 'accept_terms';
  provider: string;
  name: string;
  capability: string;
  version: string;
  url: string;
  /** null when the operator published no digest. */
  digest: string | null;
  /** The catalog calls that show and accept these terms (send `accept` only after the user agreed). */
  show: { provider: 'firecrawl'; capability: 'terms/show'; options: { provider: string } };
  accept: { provider: 'firecrawl'; capability: 'terms/accept'; options: { provider: string; version: string; digest: string | null; confirmed: true } };
}

function gateOf(e: CatalogEntry): TermsGate {
  const t = e.terms!;
  const digest = t.digest ?? null;
  return {
    type: 'accept_terms',
    provider: e.provider,
    name: e.providerName,
    capability: e.capability,
    version: t.version,
    url: t.url,
    digest,
    show: { provider: 'firecrawl', capability: 'terms/show', options: { provider: e.provider } },
    accept: { provider: 'firecrawl', capability: 'terms/accept', options: { provider: e.provider, version: t.version, digest, confirmed: true } },
  };
}

/** The providers among `entries` whose current terms the team has not accepted (one gate per provider). */
export async function termsGates(db: Db, teamId: string, entries: CatalogEntry[]): Promise<TermsGate[]> {
  const gated = entries.filter((e) => e.terms);
  if (!gated.length) return [];
  const accepted = await acceptedCatalogTerms(db, teamId, gated.map((e) => e.provider));
  const gates = new Map<string, TermsGate>();
  for (const e of gated) if (accepted.get(e.provider) !== e.terms!.version && !gates.has(e.provider)) gates.set(e.provider, gateOf(e));
  return [...gates.values()];
}

export function termsRequiredError(gates: TermsGate[]): WdsError {
  const names = gates.map((g) => `${g.name} (${g.provider}, terms version ${g.version}: ${g.url})`).join(', ');
  return new WdsError('FORBIDDEN', {
    code: 'THIRD_PARTY_DATA_TERMS_REQUIRED',
    // The SDKs' RequiresAction names one provider: the first; every gated provider is in details.
    requiresAction: { type: 'accept_terms', terms: gates[0]!.provider, version: gates[0]!.version, url: gates[0]!.url },
    message: `Forbidden: this team has not accepted the third-party data terms of ${names}. After the user has read and explicitly agreed to them, call firecrawl/terms/accept with the options in details[].accept, then retry. Nothing was executed.`,
    details: gates,
  });
}

/** What `firecrawl/terms/show` answers for a provider: its terms and whether the team accepted them. */
export async function showTerms(db: Db, teamId: string, entries: CatalogEntry[], provider: string) {
  const e = termsEntry(entries, provider);
  const accepted = (await acceptedCatalogTerms(db, teamId, [provider])).get(provider);
  const t = e.terms!;
  return { provider, name: e.providerName, version: t.version, url: t.url, digest: t.digest ?? null, accepted: accepted === t.version, ...(accepted && accepted !== t.version ? { acceptedVersion: accepted } : {}) };
}

/** `firecrawl/terms/accept`: records the acceptance of the provider's current version (and digest, when one is published). */
export async function acceptTerms(db: Db, teamId: string, entries: CatalogEntry[], o: { provider: string; version: string; digest?: string | null }) {
  const e = termsEntry(entries, o.provider);
  const t = e.terms!;
  if (o.version !== t.version || (t.digest && o.digest != null && o.digest !== t.digest)) {
    throw new WdsError('CONFLICT', { code: 'terms_version_mismatch', message: `The current terms of ${o.provider} are version ${t.version}${t.digest ? ` (digest ${t.digest})` : ''}; show them again (firecrawl/terms/show) and accept what the user read.` });
  }
  const acceptedAt = await acceptCatalogTerms(db, teamId, o.provider, t.version);
  return { provider: o.provider, version: t.version, accepted: true, acceptedAt: acceptedAt.toISOString() };
}

function termsEntry(entries: CatalogEntry[], provider: string): CatalogEntry {
  const of = entries.filter((e) => e.provider === provider);
  if (!of.length) throw new WdsError('NOT_FOUND', { code: 'unknown_provider', message: `Unknown provider: ${provider}.` });
  const e = of.find((x) => x.terms);
  if (!e) throw new WdsError('NOT_FOUND', { code: 'no_terms', message: `${provider} publishes no third-party data terms: its tools need no acceptance.` });
  return e;
}
