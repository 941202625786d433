import type { AgentToolArgsOf } from '@wds/contracts';
import { WdsError } from '@wds/errors';
import { buildDocumentAsync } from '@wds/documents';
import { assertUrlAllowed } from '@wds/fetch';
import { browserPageInFlight } from '@wds/metrics';
import type { AgentToolInput, AgentToolResult } from '@wds/workflows/agent';
import { renderedPage, scrapeRenderRequest, type BrowserActivityDeps } from '../browser/render-page';
import { combinedUrlChecks } from '../scrape/pipeline';
import { agentScrapeOptions, checkAllowed, pageIdOf, pageOutcome, strictUrlCheck } from './pages';
import { runToolCall, toolErrorOf, type Tool } from './tool-runner';

export type AgentBrowserDeps = Pick<BrowserActivityDeps, 'db' | 'renderer' | 'allowPrivateNetwork' | 'maxBodyBytes'>;

/**
 * wds-browser: the scrape tool for pages that need the browser (actions, mobile, waitFor, or
 * HTML rendered by scripts). No profile, no screenshot files: the agent reads markdown. The
 * page is not cached (actions make it this run's own).
 */
function browserScrape(deps: AgentBrowserDeps): Tool<AgentToolArgsOf<'scrape'>> {
  return {
    estimate: () => 1,
    async run(a, env) {
      checkAllowed(env.ctx, a.url);
      const o = agentScrapeOptions(a, env.ctx);
      const strict = strictUrlCheck(env.ctx);
      try {
        const req = scrapeRenderRequest({ ...o, url: a.url }, { timeoutMs: o.timeout, allowPrivateNetwork: deps.allowPrivateNetwork, signal: env.signal });
        // strictConstrainToURLs on every main-frame navigation too: redirect hops, scripts, actions.
        const r = await deps.renderer.render({ ...req, checkUrl: combinedUrlChecks(req.checkUrl, strict) });
        // Where the browser ended up after redirects: nothing of a blocked page reaches the model.
        assertUrlAllowed(r.finalUrl, o.threatProtection);
        strict?.(new URL(r.finalUrl));
        const page = renderedPage(a.url, r);
        const built = await buildDocumentAsync(page, o, { scrapeId: pageIdOf(env.ctx.run.id, env.input), engine: 'browser', cache: { state: 'miss' }, timeoutMs: o.timeout, signal: env.signal });
        return pageOutcome({ ...built, statusCode: page.statusCode }, a.url, env);
      } catch (e) {
        if (e instanceof WdsError && e.kind !== 'INTERNAL') throw toolErrorOf(e);
        throw e;
      }
    },
  };
}

export function agentBrowserTool(deps: AgentBrowserDeps, input: AgentToolInput): Promise<AgentToolResult> {
  if (input.name !== 'scrape') throw new Error(`${input.name} is not a wds-browser tool`);
  return browserPageInFlight('agent', () => runToolCall(deps.db, input, 'scrape', browserScrape(deps)));
}
