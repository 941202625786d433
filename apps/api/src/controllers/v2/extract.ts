import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EXTRACT_WEB_SEARCH_RESULTS, extractRequestSchema, httpUrl, isWildcardUrl, scrapeOptionsSchema, webSearchQuery, type ExtractRequest, type ScrapeOptions, type StoredExtractOptions } from '@wds/contracts';
import { crawlUrlKey } from '@wds/crawl';
import { insertExtractJob, jobCreditsUsed, loadTeamExtractJob } from '@wds/db';
import { extractJob } from '@wds/workflows/job-specs';
import { WdsError } from '@wds/errors';
import { compileUserSchema } from '@wds/llm';
import type { ApiDeps } from '../../deps';
import { noteLogIds } from '../../logging';
import { requireScope } from '../../middleware/auth';
import { baseUrl } from '../../services/base-url';
import { planCrawl } from '../../services/crawl-plan';
import { startJob } from '../../services/jobs';
import { checkScrapePolicy } from '../../services/scrape-policy';
import { validateBody } from './validate';
import { checkTeamFeatures } from '../../services/team-features';
import { checkJobId } from './job-id';

export interface ExtractConfig {
  /** Pages one extract may fetch, named and expanded together (WDS_EXTRACT_MAX_PAGES). */
  maxPages: number;
  /** Time the model steps of one extract may take (WDS_EXTRACT_TIMEOUT_MS); then the answer is partial. */
  timeoutMs: number;
  /** Pages fetched at once for one extract. */
  concurrency: number;
  publicUrl?: string;
}

/**
 * Upstream marks /extract deprecated in favour of /agent and keeps it working: so do we, and say
 * so in words and in headers: `Deprecation: true` (the IETF draft's form; upstream published no
 * date for RFC 9745's `@epoch` form) and an RFC 8288 successor-version link.
 */
export const EXTRACT_DEPRECATION =
  'The extract endpoint is deprecated in favour of /v2/agent (as upstream); it keeps working. See https://docs.firecrawl.dev/developer-guides/usage-guides/choosing-the-data-extractor.';

function markDeprecated(reply: FastifyReply): void {
  reply.header('Deprecation', 'true');
  reply.header('Link', '</v2/agent>; rel="successor-version"');
}

const unavailable = (message: string) => new WdsError('FEATURE_NOT_AVAILABLE', { code: 'FEATURE_NOT_AVAILABLE', message });

/**
 * POST /v2/extract: validate, store the job with its named URLs as the frontier's first entries,
 * start its workflow, answer with its id. Everything a model does happens on workers.
 */
export function extractController(deps: ApiDeps, cfg: ExtractConfig) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'extract');
    markDeprecated(reply);
    const o = validateBody(extractRequestSchema, req.body);
    refuseWhatIsMissing(o, deps, req);
    // A schema the validator cannot compile is the spec's 422, before anything is fetched.
    if (o.schema) await compileUserSchema(o.schema);
    const warnings: string[] = [];
    const pageOptions = pageOptionsOf(o.scrapeOptions ?? scrapeOptionsSchema.parse({}), warnings);
    // The request's threat protection covers every page the extract fetches (the pages' own wins when both are given).
    if (o.threatProtection && !pageOptions.threatProtection) pageOptions.threatProtection = o.threatProtection;
    await checkScrapePolicy(pageOptions, req.auth, deps.deployment, { jobKind: 'extract' });

    const { valid, invalid, details } = checkUrls(o.urls ?? []);
    checkTeamFeatures(req.auth, { threatProtection: pageOptions.threatProtection }, valid);
    if (invalid.length && !o.ignoreInvalidURLs) throw new WdsError('INVALID_URL', { details });
    const webSearch = o.enableWebSearch ? webSearchOf(o) : null;
    if (!valid.length && !webSearch) {
      throw new WdsError('BAD_REQUEST', { details: [{ code: 'too_small', path: ['urls'], message: 'urls must contain at least one valid URL (or set enableWebSearch to find the pages)' }, ...details] });
    }
    const named = [...new Set(valid.filter((u) => !isWildcardUrl(u)))];
    const wildcards = [...new Set(valid.filter(isWildcardUrl))];
    if (named.length > cfg.maxPages) {
      throw new WdsError('BAD_REQUEST', { details: [{ code: 'too_big', path: ['urls'], message: `an extract reads at most ${cfg.maxPages} pages in this deployment (WDS_EXTRACT_MAX_PAGES)` }] });
    }

    const id = randomUUID();
    noteLogIds(req, { jobId: id });
    const options: StoredExtractOptions = {
      prompt: o.prompt,
      schema: o.schema,
      systemPrompt: o.systemPrompt,
      showSources: o.showSources,
      pageOptions,
      wildcards,
      includeSubdomains: o.includeSubdomains,
      ignoreSitemap: o.ignoreSitemap,
      maxPages: cfg.maxPages,
      warnings,
      webSearch,
    };
    await insertExtractJob(deps.db, {
      id,
      teamId: req.auth.teamId,
      options,
      pageOptions,
      pageLimit: cfg.maxPages,
      seeds: named.map((url) => ({ url, key: crawlUrlKey(url), depth: 0, external: false })),
    });
    const plan = planCrawl({ maxConcurrency: cfg.concurrency }, cfg.concurrency);
    await startJob(deps, extractJob, { jobId: id, args: [{ jobId: id, plan, deadlineMs: Date.now() + cfg.timeoutMs }] });
    return reply.send({
      success: true,
      id,
      url: `${baseUrl(req, cfg.publicUrl)}/v2/extract/${id}`,
      ...(o.ignoreInvalidURLs ? { invalidURLs: invalid } : {}),
      warning: [EXTRACT_DEPRECATION, ...warnings].join(' '),
    });
  };
}

/** GET /v2/extract/{id}: `data` is [] while processing (as upstream); credits are live from the ledger. */
export function extractStatusController(deps: ApiDeps) {
  return async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    requireScope(req, 'extract');
    markDeprecated(reply);
    const { id } = req.params;
    checkJobId(id);
    const job = await loadTeamExtractJob(deps.db, req.auth.teamId, id);
    if (!job) throw new WdsError('NOT_FOUND', { message: 'Extract job not found' });
    const o = job.options as StoredExtractOptions;
    const running = job.status === 'processing';
    const warning = [EXTRACT_DEPRECATION, job.warning].filter(Boolean).join(' ');
    return reply.send({
      success: true,
      id: job.id,
      status: job.status,
      data: running ? [] : job.data,
      ...(job.status === 'completed' && o.showSources ? { sources: job.sources ?? {} } : {}),
      ...(job.error ? { error: job.error } : {}),
      warning,
      creditsUsed: running ? await jobCreditsUsed(deps.db, job.id) : job.creditsUsed,
      ...(running ? {} : { tokensUsed: job.tokensUsed }),
      expiresAt: job.expiresAt.toISOString(),
    });
  };
}

/** Parts of the request this deployment cannot serve: a 400 naming each, before anything is stored. */
function refuseWhatIsMissing(o: ExtractRequest, deps: ApiDeps, req: FastifyRequest): void {
  const llm = deps.deployment?.llm;
  if (!llm?.ok) throw unavailable(`/v2/extract is not available in this deployment: ${llm?.message ?? 'no LLM is configured'}.`);
  if (o.agent) throw unavailable("'agent' (FIRE-1) is not available for /v2/extract: use POST /v2/agent, extract's successor.");
  if (o.webhook) throw unavailable("'webhook' is not available for /v2/extract: poll GET /v2/extract/{id}.");
  if (o.allowExternalLinks) throw unavailable("'allowExternalLinks' is not available for /v2/extract: wildcard expansion stays on the site (and its subdomains with includeSubdomains).");
  checkTeamFeatures(req.auth, o);
  if (o.scrapeOptions?.zeroDataRetention) {
    throw new WdsError('BAD_REQUEST', { details: [{ code: 'unsupported', path: ['scrapeOptions', 'zeroDataRetention'], message: 'zeroDataRetention is not supported by /v2/extract: pages and answers are stored for the job (24 hours) and sent to the model' }] });
  }
}

/**
 * enableWebSearch: the deployment's search (POST /v2/search's providers: the own index, SearXNG)
 * is asked, by the job's seed step, for the request's subject words; the result pages join the named ones.
 */
function webSearchOf(o: ExtractRequest): NonNullable<StoredExtractOptions['webSearch']> {
  const query = webSearchQuery(o.prompt, o.schema);
  if (!query) {
    throw new WdsError('BAD_REQUEST', {
      details: [{ code: 'custom', path: ['prompt'], message: 'enableWebSearch searches for the words of prompt (else of the schema\'s property names): they hold nothing to search for' }],
    });
  }
  return { query, limit: EXTRACT_WEB_SEARCH_RESULTS };
}

/**
 * Pages are read as markdown, whatever formats the request lists (Firecrawl's own example passes
 * a json format there); model-made page formats and onlyCleanContent would be billed per page for
 * nothing the answer uses, so they are dropped, and the response says so.
 */
function pageOptionsOf(s: ScrapeOptions, warnings: string[]): ScrapeOptions {
  const other = s.formats.filter((f) => f.type !== 'markdown').map((f) => f.type);
  if (other.length) warnings.push(`scrapeOptions.formats (${[...new Set(other)].join(', ')}) are not used by extract: pages are read as markdown.`);
  if (s.onlyCleanContent) warnings.push('scrapeOptions.onlyCleanContent is not used by extract.');
  return { ...s, formats: [{ type: 'markdown' }], onlyCleanContent: false };
}

function checkUrls(raw: unknown[]) {
  const valid: string[] = [];
  const invalid: string[] = [];
  const details: { code: string; path: (string | number)[]; message: string }[] = [];
  raw.forEach((u, i) => {
    const r = httpUrl.safeParse(u);
    if (r.success) valid.push(r.data);
    else {
      invalid.push(typeof u === 'string' ? u : JSON.stringify(u));
      details.push({ code: 'invalid_url', path: ['urls', i], message: `urls[${i}] must be an absolute http(s) URL (a trailing /* expands the site)` });
    }
  });
  return { valid, invalid, details };
}
