import { allEntries, entriesForUrls, invokeHttpProvider, optionContracts, optionProblems, rankByQuery, reservationOf, resolveEntry, termsGates, toolId, type CatalogEntry, type TermsGate } from '@wds/catalog';
import type { AgentRunOptions, AgentToolArgsOf } from '@wds/contracts';
import { agentCatalogCalls } from '@wds/db';
import type { DiscoveryDeps } from '../crawl/discovery';
import type { RunContext } from './context';
import { ToolError, type Tool, type ToolOutcome } from './tool-runner';

/**
 * Exchange for the agent (the request's `exchange: {enabled: true}`; Firecrawl's Exchange is its
 * catalogue of provider tools, here the deployment's catalog): `find_tools` lists the operator's
 * HTTP capabilities (free), `call_tool` runs one (its price reserved before the call, billed with
 * the job as every agent step is: on success). The built-in capabilities are the agent's own tools
 * (search, map, scrape) and are not offered twice. `toolkits` narrows the catalog to those provider
 * ids or categories; `maxCalls` caps the job's paid calls (checked before each call).
 */
/** The database, and the network policy and size cap every outbound request of a worker has. */
export type AgentCatalogDeps = DiscoveryDeps;

/** How long one provider call may take inside an agent step (the request's own timeout does not apply to jobs). */
const CALL_TIMEOUT_MS = 60_000;
const LISTED = 10;
/** What the model reads of a provider's answer. */
const MAX_CONTENT_CHARS = 20_000;

type Exchange = NonNullable<AgentRunOptions['exchange']>;

function exchangeOf(ctx: RunContext): Exchange {
  const x = ctx.rootOptions.exchange;
  if (!x) throw new ToolError('provider tools (exchange) are not enabled for this run');
  return x;
}

const offered = (e: CatalogEntry, x: Exchange) =>
  e.target.kind === 'http' && (!x.toolkits?.length || x.toolkits.includes(e.provider) || e.categories.some((c) => x.toolkits!.includes(c)));

function describe(e: CatalogEntry): string {
  const options = optionContracts(e.optionsSchema)
    .map((o) => `${o.name} (${o.type}${o.required ? ', required' : ''})${o.about ? `: ${o.about}` : ''}`)
    .join('; ');
  return `- ${e.provider} / ${e.capability} — ${e.name}: ${e.description} (${e.creditsCost} credits per call)${options ? `\n  options: ${options}` : ''}`;
}

export function findToolsTool(deps: AgentCatalogDeps): Tool<AgentToolArgsOf<'find_tools'>> {
  return {
    estimate: () => 0,
    async run(a, env) {
      const x = exchangeOf(env.ctx);
      let entries = a.url ? (await entriesForUrls(deps.db, [a.url])).map((m) => m.entry) : await allEntries(deps.db);
      entries = entries.filter((e) => offered(e, x));
      if (a.query?.trim()) entries = rankByQuery(entries, a.query);
      const shown = entries.slice(0, LISTED);
      return {
        content: shown.length ? `${shown.length} of ${entries.length} tools:\n${shown.map(describe).join('\n')}` : 'No provider tool matches.',
        result: { tools: shown.map(toolId) },
        credits: 0,
      };
    },
  };
}

export function callToolTool(deps: AgentCatalogDeps): Tool<AgentToolArgsOf<'call_tool'>> {
  return {
    // The price depends on the capability: reserved in run(), once the entry is known.
    estimate: () => 0,
    async run(a, env) {
      const x = exchangeOf(env.ctx);
      const entry = await resolveEntry(deps.db, a.provider, a.capability);
      if (!entry || !offered(entry, x)) throw new ToolError(`there is no provider tool ${a.provider}/${a.capability} in this run's catalog (use find_tools)`);
      const options = a.options ?? {};
      const problems = await optionProblems(entry, options);
      if (problems.length) throw new ToolError(`invalid options for ${toolId(entry)}: ${problems.join('; ')}`);
      // Gated providers are never called for a team that has not accepted their terms; accepting is the user's act, not the agent's.
      const [gate] = await termsGates(deps.db, env.ctx.root.teamId, [entry]);
      if (gate) return termsSkipped(entry, gate, a.adds, x, env.ctx);
      if (x.maxCalls !== undefined && (await agentCatalogCalls(deps.db, env.ctx.root.id)).paidCalls >= x.maxCalls) {
        throw new ToolError(`this job may make at most ${x.maxCalls} paid provider calls (exchange.maxCalls), and has made them`);
      }
      const price = reservationOf(entry, options);
      if (price > 0 && !(await env.reserveMore(price))) {
        return { content: 'Error: the credit limit does not allow this provider call.', result: { tool: toolId(entry), error: 'credit limit' }, credits: 0, outcome: { kind: 'credit_limit' } };
      }
      if (entry.target.kind !== 'http') throw new ToolError(`${toolId(entry)} is not a provider tool`);
      const r = await invokeHttpProvider(
        entry.target,
        { provider: entry.provider, capability: entry.capability, options, requestId: env.ctx.root.id, callId: `${env.ctx.run.id}:${env.input.step}:${env.input.callId}` },
        { allowPrivateNetwork: deps.allowPrivateNetwork, timeoutMs: CALL_TIMEOUT_MS, maxBytes: deps.maxBodyBytes, signal: env.signal },
      );
      if (!r.ok) throw new ToolError(`${toolId(entry)} failed: ${r.error.code}: ${r.error.message}`, r.error.code === 'provider_timeout' || r.error.code === 'provider_unreachable');
      const text = JSON.stringify(r.data);
      return {
        content: `${toolId(entry)} answered (${price} credits):\n${text.length > MAX_CONTENT_CHARS ? `${text.slice(0, MAX_CONTENT_CHARS)}… (cut)` : text}`,
        result: { tool: toolId(entry), catalogCall: true, creditsCost: price },
        credits: price,
      };
    },
  };
}

/**
 * A gated provider (its data terms not accepted by the team): never called, in any mode. The
 * call's result records it as a skipped provider (the status's `exchange.skippedProviders`). With
 * `onTermsRequired: "ask"` the orchestrator's turn ends here with a terms offer (the status's
 * `pendingApproval` and `exchange.requiresAction`), unless the user declined these terms in
 * answer to the previous turn; a sub-agent never ends the turn: it skips.
 */
function termsSkipped(entry: CatalogEntry, gate: TermsGate, adds: string | undefined, x: Exchange, ctx: RunContext): ToolOutcome {
  const declined = x.termsAnswer?.approved === false && x.termsAnswer.providers.includes(entry.provider);
  const ask = x.onTermsRequired === 'ask' && ctx.isRoot && !declined;
  const skippedProvider = {
    provider: entry.provider,
    name: gate.name,
    capability: entry.capability,
    ...(adds?.trim() ? { adds: adds.trim() } : {}),
    reason: 'terms_required',
    version: gate.version,
    termsUrl: gate.url,
    digest: gate.digest,
  };
  const why = `${toolId(entry)} was not called: the team has not accepted ${gate.name}'s third-party data terms (version ${gate.version}).`;
  return {
    content: ask
      ? `${why} The user is asked to accept them; this turn ends now. Tell the user what ${gate.name} would add.`
      : `${why}${declined ? ' The user declined them.' : ''} Do not call ${entry.provider}'s tools again in this run; answer with other tools. The user is told it was skipped.`,
    result: { tool: toolId(entry), skippedProvider },
    credits: 0,
    ...(ask ? { outcome: { kind: 'terms_required' as const } } : {}),
  };
}
