import { z } from 'zod';

/**
 * Request objects of Firecrawl's enterprise features, as its v2 API reference
 * (`AuditMetadata`, `ThreatProtectionOverride`) and the JS SDK (`AuditMetadata`,
 * `ThreatProtectionOptions`) define them. The spec lists both fields with their fields "not
 * shown"; the public reference shows them, so that shape is what is validated.
 */

/** Who a request is for, echoed in audit records (here: the job's row, its webhooks and the request's log line). */
export const auditMetadataSchema = z.strictObject({
  username: z.string().min(1).max(1024),
});
export type AuditMetadata = z.output<typeof auditMetadataSchema>;

/** Domains as plain names or `*.` globs; no scheme, path or port (Firecrawl's rule). */
const domainList = z
  .array(z.string().min(1).max(253).regex(/^(\*\.)?[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/, 'a domain (example.com) or a wildcard (*.example.com), without scheme, path or port'))
  .max(1000);

/**
 * A per-request override of the team's threat-protection policy. Validated and recorded with the
 * job; its lists are enforced on the URLs the request fetches (`@wds/fetch` threat.ts), its
 * classifier modes answered as unavailable (README: What works).
 */
export const threatProtectionSchema = z.strictObject({
  mode: z.enum(['off', 'manual-only', 'normal', 'zscaler']).optional(),
  riskScoreThreshold: z.int().min(0).max(100).optional(),
  blacklist: domainList.optional(),
  whitelist: domainList.optional(),
  blockedTlds: z.array(z.string().regex(/^[a-z0-9-]{1,63}$/, 'a top-level domain in lower case, without the dot')).max(1000).optional(),
  failurePolicy: z.enum(['open', 'closed']).optional(),
});
export type ThreatProtection = z.output<typeof threatProtectionSchema>;

/** The audit metadata a validated request carries (top level, or in its scrapeOptions). */
export function auditMetadataOf(body: unknown): AuditMetadata | undefined {
  const b = body as { auditMetadata?: unknown; scrapeOptions?: { auditMetadata?: unknown } | null } | null | undefined;
  const r = auditMetadataSchema.safeParse(b?.auditMetadata ?? b?.scrapeOptions?.auditMetadata);
  return r.success ? r.data : undefined;
}
