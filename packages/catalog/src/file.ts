import { httpHeaders } from '@wds/contracts';
import { compileUserSchema } from '@wds/llm';
import { z } from 'zod';
import { builtinEntry, builtinOptionsSchema } from './builtins';
import { normalizeDomain } from './domains';
import type { CatalogEntry, CatalogTarget } from './types';

/** The WDS operations an operator's capability may run (the catalogue's own tools stay built-ins). */
const OPERATOR_BUILTINS = ['scrape', 'map', 'search'] as const;

/**
 * The operator's catalog file (JSON; README: "Catalog file"), imported with
 * `npm run catalog -- import FILE`. Providers hold capabilities; a capability runs an HTTP
 * endpoint (its own or the provider's) or a built-in WDS operation. Every options schema must
 * compile as JSON Schema; names follow the spec's limits (1 to 200 characters).
 */

const id = z.string().trim().min(1).max(200).regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]*$/, 'letters, digits and . _ : / - only');
const httpUrl = z.url({ protocol: /^https?$/ });
const domain = z.string().transform((d, ctx) => {
  const n = normalizeDomain(d);
  if (!n) ctx.addIssue({ code: 'custom', message: `not a domain: ${d}` });
  return n ?? '';
});

const responseContract = z.strictObject({
  about: z.string().max(2_000).optional(),
  key: z.string().max(200).optional(),
  fields: z.array(z.strictObject({ name: z.string().min(1).max(200), type: z.string().min(1).max(50), about: z.string().max(2_000).optional() })).max(200).optional(),
});

const capability = z.strictObject({
  id,
  name: z.string().trim().min(1).max(200),
  description: z.string().trim().min(1).max(4_000),
  whenToUse: z.string().max(2_000).optional(),
  creditsCost: z.int().min(0).max(100_000),
  options: z.record(z.string(), z.unknown()).optional(),
  response: responseContract.optional(),
  examples: z.record(z.string(), z.string().max(10_000)).optional(),
  categories: z.array(z.string().min(1).max(100)).max(20).optional(),
  domains: z.array(domain).max(500).optional(),
  endpoint: httpUrl.optional(),
  headers: httpHeaders.optional(),
  timeoutMs: z.int().min(1_000).max(300_000).optional(),
  builtin: z.enum(OPERATOR_BUILTINS).optional(),
});

const provider = z.strictObject({
  id,
  name: z.string().trim().min(1).max(200),
  description: z.string().max(4_000).optional(),
  categories: z.array(z.string().min(1).max(100)).max(20).optional(),
  domains: z.array(domain).max(500).optional(),
  endpoint: httpUrl.optional(),
  headers: httpHeaders.optional(),
  timeoutMs: z.int().min(1_000).max(300_000).optional(),
  allowPrivateNetwork: z.boolean().optional(),
  /** Third-party data terms a team must accept before calling the provider (README: Terms). */
  terms: z.strictObject({ version: z.string().trim().min(1).max(100), url: httpUrl, digest: z.string().trim().min(1).max(200).optional() }).optional(),
  capabilities: z.array(capability).min(1).max(1_000),
});

export const catalogFileSchema = z.strictObject({ providers: z.array(provider).max(1_000) });
export type CatalogFile = z.input<typeof catalogFileSchema>;

/** A file's capabilities as catalog entries; throws an Error listing every problem. */
export async function entriesOfFile(raw: unknown): Promise<CatalogEntry[]> {
  const parsed = catalogFileSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`catalog file: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const problems: string[] = [];
  const out: CatalogEntry[] = [];
  const seen = new Set<string>();
  for (const p of parsed.data.providers) {
    for (const c of p.capabilities) {
      const where = `${p.id}/${c.id}`;
      if (seen.has(where)) problems.push(`${where}: declared twice`);
      seen.add(where);
      if (builtinEntry(p.id, c.id)) problems.push(`${where}: the name of a built-in capability`);
      const target = targetOf(p, c, where, problems);
      const optionsSchema = c.options ?? (c.builtin ? builtinOptionsSchema(c.builtin) : { type: 'object' });
      try {
        await compileUserSchema(optionsSchema);
      } catch (e) {
        problems.push(`${where}: options: ${(e as Error).message}`);
      }
      if (!target) continue;
      out.push({
        provider: p.id,
        capability: c.id,
        name: c.name,
        description: c.description,
        providerName: p.name,
        ...(p.description ? { providerDescription: p.description } : {}),
        ...(c.whenToUse ? { whenToUse: c.whenToUse } : {}),
        categories: c.categories ?? p.categories ?? [],
        domains: [...new Set(c.domains ?? p.domains ?? [])],
        creditsCost: c.creditsCost,
        optionsSchema,
        ...(c.response ? { response: c.response } : {}),
        ...(c.examples ? { examples: c.examples } : {}),
        ...(p.terms ? { terms: p.terms } : {}),
        target,
      });
    }
  }
  if (problems.length) throw new Error(`catalog file: ${problems.join('; ')}`);
  return out;
}

function targetOf(p: z.output<typeof provider>, c: z.output<typeof capability>, where: string, problems: string[]): CatalogTarget | null {
  if (c.builtin) {
    if (c.endpoint) problems.push(`${where}: either builtin or endpoint, not both`);
    return { kind: 'builtin', operation: c.builtin };
  }
  const url = c.endpoint ?? p.endpoint;
  if (!url) {
    problems.push(`${where}: no endpoint (on the capability or its provider) and no builtin`);
    return null;
  }
  const headers = { ...(p.headers ?? {}), ...(c.headers ?? {}) };
  return {
    kind: 'http',
    url,
    ...(Object.keys(headers).length ? { headers } : {}),
    ...((c.timeoutMs ?? p.timeoutMs) ? { timeoutMs: c.timeoutMs ?? p.timeoutMs } : {}),
    ...(p.allowPrivateNetwork ? { allowPrivateNetwork: true } : {}),
  };
}
