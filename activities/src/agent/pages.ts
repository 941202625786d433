import { createHash } from 'node:crypto';
import { scrapeOptionsSchema, type AgentToolArgsOf, type ScrapeOptions } from '@wds/contracts';
import { stableUuid } from '@wds/db';
import type { BuiltDocument } from '@wds/documents';
import { WdsError } from '@wds/errors';
import { threatVerdict, unsafeUrlError } from '@wds/fetch';
import { pageBlock } from '@wds/llm';
import type { AgentToolInput } from '@wds/workflows/agent';
import type { RunContext } from './context';
import { ToolError, toolErrorOf, toolKey, type ToolEnv, type ToolOutcome } from './tool-runner';

/** What the scrape tool shares between its HTTP (wds-fetch) and browser (wds-browser) halves. */

const LINKS_SHOWN = 50;

/**
 * A URL the job's threat-protection lists block is the model's news (a tool error naming the
 * code and the rule), never fetched: the API checked only the starting URLs, the model may ask
 * for any other.
 */
export function checkThreat(c: RunContext, url: string): void {
  const rule = threatVerdict(url, c.rootOptions.threatProtection);
  if (rule) throw toolErrorOf(unsafeUrlError(url, rule));
}

/** `urls` + strictConstrainToURLs: a strict job's agents may open only the URLs it was given; the threat lists apply to every URL. */
export function checkAllowed(c: RunContext, url: string): void {
  checkThreat(c, url);
  const o = c.rootOptions;
  if (!o.strictConstrainToURLs) return;
  if (!listed(c).has(sameUrl(url))) throw new ToolError(`${url} is outside the URLs this task is limited to (strictConstrainToURLs); use one of: ${(o.urls ?? []).join(', ')}`);
}

const listed = (c: RunContext) => new Set((c.rootOptions.urls ?? []).map(sameUrl));

/**
 * strictConstrainToURLs past the requested URL: the `checkUrl` hook the engines call with every
 * URL they are about to read — each redirect hop (before it is requested, over HTTP), a cached
 * copy's final URL, each main-frame navigation of the browser (scripts and actions included).
 * A URL off the list fails the page with a 403 the model reads as the tool's error, and nothing
 * of it is returned. Undefined when the job sets no such bound.
 */
export function strictUrlCheck(c: RunContext): ((u: URL) => void) | undefined {
  if (!c.rootOptions.strictConstrainToURLs) return undefined;
  const allowed = listed(c);
  return (u: URL) => {
    if (allowed.has(sameUrl(u.href))) return;
    throw new WdsError('URL_BLOCKED', {
      code: 'AGENT_URL_NOT_ALLOWED',
      message: `the page led to ${u.href}, which is outside the URLs this task is limited to (strictConstrainToURLs): it was not read`,
    });
  };
}

/** URLs compared without fragment and trailing slash. */
function sameUrl(u: string): string {
  try {
    const x = new URL(u);
    x.hash = '';
    return x.href.replace(/\/$/, '');
  } catch {
    return u;
  }
}

/** The scrape options of an agent page: markdown and links, main content, the job's location. */
export function agentScrapeOptions(args: AgentToolArgsOf<'scrape'>, c: RunContext): ScrapeOptions {
  return scrapeOptionsSchema.parse({
    formats: ['markdown', 'links'],
    onlyMainContent: args.onlyMainContent ?? true,
    ...(args.actions?.length ? { actions: args.actions } : {}),
    waitFor: args.waitFor ?? 0,
    mobile: args.mobile ?? false,
    ...(c.rootOptions.location ? { location: c.rootOptions.location } : {}),
    // The engines enforce it past the first URL: each redirect hop, a cached copy's origin, the browser's final URL.
    ...(c.rootOptions.threatProtection ? { threatProtection: c.rootOptions.threatProtection } : {}),
    timeout: 60_000,
  });
}

/** The id the page's markdown snapshot gets (the runner derives it from the call): the model's handle for `extract`. */
export const pageIdOf = (runId: string, input: AgentToolInput) => stableUuid('agent-snapshot', runId, `${toolKey(input)}:0`);

/** A built page as the model reads it, the trace shows it and the workspace keeps it. PDFs bill their pages. */
export async function pageOutcome(built: BuiltDocument & { statusCode: number }, url: string, env: ToolEnv): Promise<ToolOutcome> {
  const doc = built.document;
  const markdown = doc.markdown ?? '';
  const pageId = pageIdOf(env.ctx.run.id, env.input);
  const title = typeof doc.metadata.title === 'string' ? doc.metadata.title : undefined;
  const finalUrl = typeof doc.metadata.url === 'string' ? doc.metadata.url : url;
  if (built.creditsUsed > 1 && !(await env.reserveMore(built.creditsUsed - 1))) {
    return { content: 'Error: the credit limit does not allow reading this document.', result: { url, error: 'credit limit' }, credits: 0, outcome: { kind: 'credit_limit' } };
  }
  const links = (doc.links ?? []).slice(0, LINKS_SHOWN);
  const content = [
    `Page ${finalUrl} (HTTP ${built.statusCode})${title ? ` — ${title}` : ''}`,
    `pageId: ${pageId}`,
    pageBlock({ markdown, url: finalUrl }, markdown),
    links.length ? `Links on the page:\n${links.map((l) => `- ${l}`).join('\n')}` : '',
  ].filter(Boolean).join('\n\n');
  const host = new URL(finalUrl).host;
  return {
    content,
    result: { url, ...(finalUrl !== url ? { finalUrl } : {}), statusCode: built.statusCode, ...(title ? { title } : {}), pageId, chars: markdown.length },
    credits: built.creditsUsed,
    artifacts: [{
      artifact: `page-${createHash('sha256').update(finalUrl).digest('hex').slice(0, 12)}`,
      kind: 'markdown',
      content: markdown,
      path: `/workspace/pages/${host}${new URL(finalUrl).pathname.replace(/\/$/, '/index')}.md`,
      url: finalUrl,
    }],
  };
}
