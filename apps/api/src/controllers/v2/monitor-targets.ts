import { checkPagesOf, crawlRequestSchema, parseBody, type MonitorTarget, type ScrapeOptions } from '@wds/contracts';
import { WdsError } from '@wds/errors';
import { compileUserSchema } from '@wds/llm';
import type { MonitorCrawlSpec } from '@wds/workflows/monitor';
import type { FastifyRequest } from 'fastify';
import type { ApiDeps } from '../../deps';
import { planCrawl } from '../../services/crawl-plan';
import { checkScrapePolicy } from '../../services/scrape-policy';
import { checkTeamFeatures } from '../../services/team-features';
import { crawlLimitWithin } from './crawl';
import type { MonitorConfig } from './monitor-shared';

/**
 * What the API checks and resolves in a monitor's targets beyond their schema: a crawl target's
 * `crawlOptions` are the crawl request's (validated by the crawl schema, within the deployment's
 * crawl limit; `maxDepth` is read as `maxDiscoveryDepth`), resolved once into the spec each
 * check's crawl job is made from; changeTracking json mode needs an LLM and a valid schema (or a
 * prompt); email notifications need SMTP.
 */

type Detail = { code: string; path: (string | number)[]; message: string };

/** crawlOptions a monitor's crawl target sets elsewhere (the target's url and scrapeOptions) or cannot have. */
const NOT_IN_CRAWL_OPTIONS: Record<string, string> = {
  url: "set the target's `url`",
  scrapeOptions: "set the target's `scrapeOptions`",
  webhook: "monitors send their own webhooks: set the monitor's `webhook`",
  prompt: 'a prompt cannot be turned into crawl options for a monitor: set the options themselves',
  zeroDataRetention: "zero data retention is the team's setting for monitors",
};

export interface ResolvedTargets {
  targets: Record<string, unknown>[];
  crawlSpecs: Record<string, MonitorCrawlSpec>;
}

/** The monitor's targets as stored (the request's, each with its id) and its crawl targets' specs; throws 400 naming each problem. */
export async function resolveTargets(deps: ApiDeps, req: FastifyRequest, cfg: MonitorConfig, parsed: MonitorTarget[], stored: Record<string, unknown>[]): Promise<ResolvedTargets> {
  const details: Detail[] = [];
  const crawlSpecs: Record<string, MonitorCrawlSpec> = {};
  for (const [i, t] of parsed.entries()) {
    const at = ['targets', i];
    if (t.type === 'search') continue;
    if (t.scrapeOptions) await checkTargetPolicy(deps, req, t.scrapeOptions, [...at, 'scrapeOptions'], t.type === 'scrape' ? t.urls : [t.url]);
    const ct = t.scrapeOptions?.formats?.find((f) => f.type === 'changeTracking') as { modes?: string[]; schema?: unknown; prompt?: string } | undefined;
    if (ct?.modes?.includes('json')) details.push(...(await jsonModeProblems(deps, ct, [...at, 'scrapeOptions', 'formats'])));
    if (t.type === 'crawl') {
      const spec = crawlSpecOf(deps, req, cfg, t, stored[i]!, at, details);
      if (spec) crawlSpecs[String(stored[i]!.id)] = spec;
    }
  }
  if (details.length) throw new WdsError(details.some((d) => d.code === 'unavailable') ? 'FEATURE_NOT_AVAILABLE' : 'BAD_REQUEST', { ...(details.some((d) => d.code === 'unavailable') ? { code: 'FEATURE_NOT_AVAILABLE', message: `Not available in this deployment: ${details.filter((d) => d.code === 'unavailable').map((d) => d.message).join('; ')}.` } : {}), details });
  return { targets: stored, crawlSpecs };
}

async function jsonModeProblems(deps: ApiDeps, ct: { schema?: unknown; prompt?: string }, at: (string | number)[]): Promise<Detail[]> {
  const llm = deps.deployment?.llm;
  if (!llm?.ok) return [{ code: 'unavailable', path: at, message: `changeTracking 'json' mode needs an LLM: ${llm?.message ?? 'no LLM is configured'}` }];
  if (ct.schema === undefined && !ct.prompt?.trim()) return [{ code: 'invalid_format', path: at, message: "changeTracking json mode requires a 'schema' (or a 'prompt')" }];
  if (ct.schema !== undefined) await compileUserSchema(ct.schema); // 422 LLM_INVALID_SCHEMA naming the problem
  return [];
}

/** A page's formats as a monitor fetches them: changeTracking is the monitor's own work, markdown is always there. */
function monitoredFormats<F>(formats: F[]): (F | 'markdown')[] {
  const typeOf = (f: unknown) => (typeof f === 'object' && f ? (f as { type?: string }).type : f);
  const out: (F | 'markdown')[] = formats.filter((f) => typeOf(f) !== 'changeTracking');
  if (!out.some((f) => typeOf(f) === 'markdown')) out.push('markdown');
  return out;
}

/**
 * A target's scrapeOptions pass the checks POST /v2/scrape makes (checkScrapePolicy: team
 * features 403, zero data retention's refusals 400, what the deployment lacks), under the
 * monitor's zero data retention (the team's flag, or the options' own), and the target's URLs
 * pass its threat-protection lists (403 unsafe_domain_blocked naming the first blocked one, as
 * /v2/scrape and /v2/batch/scrape answer; nothing is stored). Paths in the error's details are
 * prefixed with the target's.
 */
async function checkTargetPolicy(deps: ApiDeps, req: FastifyRequest, so: ScrapeOptions, at: (string | number)[], urls: readonly string[]): Promise<void> {
  const formats = monitoredFormats(so.formats).map((f) => (f === 'markdown' ? { type: 'markdown' as const } : f));
  try {
    await checkScrapePolicy({ ...so, formats, zeroDataRetention: !!req.auth.flags.zeroDataRetention || so.zeroDataRetention }, req.auth, deps.deployment);
    // Not through checkScrapePolicy's `url`: that one names a single scrape (media formats allowed).
    checkTeamFeatures(req.auth, { threatProtection: so.threatProtection }, urls);
  } catch (e) {
    if (!(e instanceof WdsError) || !Array.isArray(e.details)) throw e;
    const details = (e.details as { path?: unknown }[]).map((d) => (Array.isArray(d.path) ? { ...d, path: [...at, ...d.path] } : d));
    throw new WdsError(e.kind, { message: e.message, code: e.code, details, requiresAction: e.requiresAction });
  }
}

/** A crawl target's spec: the crawl request it stands for, parsed and planned as POST /v2/crawl would. */
function crawlSpecOf(deps: ApiDeps, req: FastifyRequest, cfg: MonitorConfig, t: Extract<MonitorTarget, { type: 'crawl' }>, stored: Record<string, unknown>, at: (string | number)[], details: Detail[]): MonitorCrawlSpec | null {
  const raw = { ...((stored.crawlOptions as Record<string, unknown> | undefined) ?? {}) };
  for (const [k, why] of Object.entries(NOT_IN_CRAWL_OPTIONS)) {
    if (k in raw) details.push({ code: 'unrecognized_keys', path: [...at, 'crawlOptions', k], message: `crawlOptions.${k} is not accepted in a monitor's crawl target: ${why}` });
  }
  if ('maxDepth' in raw) {
    if (!('maxDiscoveryDepth' in raw)) raw.maxDiscoveryDepth = raw.maxDepth;
    delete raw.maxDepth;
  }
  if (details.length) return null;
  // The monitor compares the pages itself: the crawl fetches markdown, fresh (monitors never read the cache).
  const scrape = { ...((stored.scrapeOptions as Record<string, unknown> | undefined) ?? {}) };
  const formats = monitoredFormats((scrape.formats as unknown[] | undefined) ?? ['markdown']);
  const r = parseBody(crawlRequestSchema, { ...raw, url: t.url, scrapeOptions: { ...scrape, formats, maxAge: 0 } });
  if (!r.ok) {
    details.push(...r.details.map((d) => ({ ...d, path: d.path[0] === 'url' ? [...at, 'url'] : d.path[0] === 'scrapeOptions' ? [...at, ...d.path] : [...at, 'crawlOptions', ...d.path] })));
    return null;
  }
  const o = r.data;
  o.limit = crawlLimitWithin(o.limit, raw.limit == null, cfg.crawl?.maxCrawlLimit);
  const { url, ...options } = o;
  return { url, options: { ...options, zeroDataRetention: !!req.auth.flags.zeroDataRetention }, plan: planCrawl(o, cfg.crawl?.defaultConcurrency ?? 20, cfg.crawl?.batchesPerRun) };
}

/** Email summaries need the deployment's SMTP server and someone to send to. */
export function checkNotification(cfg: MonitorConfig, n: { email?: { enabled?: boolean | undefined; recipients?: string[] | undefined } | undefined } | null | undefined): void {
  if (!n?.email?.enabled) return;
  if (!cfg.email) {
    throw new WdsError('FEATURE_NOT_AVAILABLE', {
      code: 'FEATURE_NOT_AVAILABLE',
      message: 'Not available in this deployment: email notifications need an SMTP server (set WDS_SMTP_URL); use `webhook`.',
      details: [{ code: 'unavailable', path: ['notification', 'email'], message: 'email notifications need WDS_SMTP_URL' }],
    });
  }
  if (!n.email.recipients?.length) {
    throw new WdsError('BAD_REQUEST', { details: [{ code: 'too_small', path: ['notification', 'email', 'recipients'], message: 'name at least one recipient: this deployment keeps no team member addresses to send to' }] });
  }
}

/**
 * Credits one check costs at most (Firecrawl's monitor prices): 1 per scrape URL; a crawl
 * target's page limit; a search target's call (2 per 10 results of each query) plus, with the
 * judge, 1 per result judged.
 */
export function creditsPerCheck(targets: Record<string, unknown>[], judge: boolean, specs: Record<string, MonitorCrawlSpec>): number {
  let n = checkPagesOf(targets).length;
  for (const t of targets) {
    if (t.type === 'crawl') n += specs[String(t.id)]?.options.limit ?? 0;
    if (t.type === 'search') {
      const max = typeof t.maxResults === 'number' ? t.maxResults : 10;
      n += (t.queries as string[]).length * Math.ceil(max / 10) * 2 + (judge ? max : 0);
    }
  }
  return n;
}
