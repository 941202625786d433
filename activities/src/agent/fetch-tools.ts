import { mapRequestSchema, type AgentToolArgsOf } from '@wds/contracts';
import { WdsError } from '@wds/errors';
import { allowedUrls } from '@wds/fetch';
import { searchCredits } from '@wds/search';
import type { AgentToolInput, AgentToolResult } from '@wds/workflows/agent';
import { planEngine } from '@wds/workflows/scrape';
import type { BrowserAvailability } from '../browser/availability';
import { clientRenderedPage } from '../browser/escalation';
import { mapSite } from '../map/activities';
import { scrapeOrEscalate, type PageDeps } from '../scrape/pipeline';
import { agentScrapeOptions, checkAllowed, pageIdOf, pageOutcome, strictUrlCheck } from './pages';
import type { WebSearch } from '../search/web-search';
import { callToolTool, findToolsTool } from './catalog-tools';
import { runToolCall, ToolError, toolErrorOf, type Tool } from './tool-runner';

export interface AgentFetchDeps extends PageDeps {
  /** The search backend; absent = no `search` tool. */
  search?: WebSearch;
  browserAvailable?: BrowserAvailability;
}

/** Engine failures (the target is unreachable, blocked, too slow) are the model's news, not a reason to retry the activity. */
async function asToolError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof WdsError) throw toolErrorOf(e);
    throw e;
  }
}


function searchTool(deps: AgentFetchDeps): Tool<AgentToolArgsOf<'search'>> {
  return {
    estimate: (a) => searchCredits(a.limit ?? 5),
    async run(a, env) {
      if (!deps.search || env.ctx.rootOptions.strictConstrainToURLs) throw new ToolError('search is not available in this run');
      const found = await deps.search.search(a.query, { teamId: env.ctx.root.teamId, limit: a.limit ?? 5, country: env.ctx.rootOptions.location?.country }).catch((e: Error) => {
        throw new ToolError(`search failed: ${e.message}`, true);
      });
      // Blocked results are left out, as /v2/search does.
      const hits = allowedUrls(found, (h) => h.url, env.ctx.rootOptions.threatProtection);
      const content = hits.length
        ? hits.map((h, i) => `${i + 1}. ${h.title ?? h.url}\n   ${h.url}${h.description ? `\n   ${h.description}` : ''}`).join('\n')
        : 'No results.';
      return { content, result: { query: a.query, results: hits.map((h) => ({ url: h.url, ...(h.title ? { title: h.title } : {}) })) }, credits: searchCredits(hits.length) };
    },
  };
}

function mapTool(deps: AgentFetchDeps): Tool<AgentToolArgsOf<'map'>> {
  return {
    estimate: () => 1,
    async run(a, env) {
      // A map reads the site's sitemaps and pages beyond the URL: not for a job bound to its URLs.
      if (env.ctx.rootOptions.strictConstrainToURLs) throw new ToolError('map is not available in this run (strictConstrainToURLs: only the given URLs may be read)');
      checkAllowed(env.ctx, a.url);
      const req = mapRequestSchema.parse({ url: a.url, ...(a.search ? { search: a.search } : {}), limit: a.limit ?? 100, includeSubdomains: false, timeout: 30_000 });
      // Blocked links are left out, as /v2/map does.
      const links = allowedUrls(await asToolError(() => mapSite(deps, req, env.signal)), (l) => l.url, env.ctx.rootOptions.threatProtection);
      return {
        content: links.length ? `${links.length} URLs:\n${links.map((l) => `- ${l.url}${l.title ? ` (${l.title})` : ''}`).join('\n')}` : 'No URLs found.',
        result: { url: a.url, count: links.length, links: links.slice(0, 20).map((l) => l.url) },
        credits: 1,
      };
    },
  };
}

function scrapeTool(deps: AgentFetchDeps): Tool<AgentToolArgsOf<'scrape'>> {
  return {
    estimate: () => 1,
    async run(a, env) {
      checkAllowed(env.ctx, a.url);
      const options = agentScrapeOptions(a, env.ctx);
      const plan = planEngine(options, (await deps.browserAvailable?.()) ?? false);
      if (plan.engine === 'unavailable') throw new ToolError(`this page needs a browser (${plan.reasons.join(', ')}), and none is available`);
      if (plan.engine === 'browser') return { needsBrowser: true };
      const page = await asToolError(() =>
        scrapeOrEscalate(
          deps,
          { url: a.url, options, scrapeId: pageIdOf(env.ctx.run.id, env.input), signal: env.signal, useCache: true, checkUrl: strictUrlCheck(env.ctx), onBackoff: 'retry' },
          plan.escalateIfClientRendered ? clientRenderedPage : undefined,
        ),
      );
      if ('needsBrowser' in page) return { needsBrowser: true };
      return pageOutcome(page, a.url, env);
    },
  };
}

/** wds-fetch: search, map and scrape (HTTP engine; a page that needs the browser goes on to wds-browser), and Exchange's find_tools / call_tool. */
export async function agentFetchTool(deps: AgentFetchDeps, input: AgentToolInput): Promise<AgentToolResult> {
  const db = deps.db;
  switch (input.name) {
    case 'search':
      return runToolCall(db, input, 'search', searchTool(deps));
    case 'map':
      return runToolCall(db, input, 'map', mapTool(deps));
    case 'scrape':
      return runToolCall(db, input, 'scrape', scrapeTool(deps));
    case 'find_tools':
      return runToolCall(db, input, 'find_tools', findToolsTool(deps));
    case 'call_tool':
      return runToolCall(db, input, 'call_tool', callToolTool(deps));
    default:
      throw new Error(`${input.name} is not a wds-fetch tool`);
  }
}

