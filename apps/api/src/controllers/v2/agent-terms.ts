import { agentResultsServed, type AgentRequest, type AgentRunExchange, type AgentRunOptions } from '@wds/contracts';
import { agentCatalogCalls, agentSkippedProviders, stableUuid, type AgentRun, type AgentSkippedProviderRow, type Db } from '@wds/db';
import { WdsError } from '@wds/errors';

/**
 * Third-party data terms in agent runs (the SDK's AgentExchangeOptions.onTermsRequired): a
 * provider whose terms the team has not accepted is never called. Every mode lists it in
 * `exchange.skippedProviders`; `ask` also ends the orchestrator's turn with a `terms`
 * pendingApproval (and `exchange.requiresAction`: the catalog calls that show and accept the
 * terms). The caller accepts with `firecrawl/terms/accept` after the user agreed, then continues
 * the thread with `exchange.approve: {approvalId}` (or `decline`). What the agents skipped is read
 * from their `call_tool` results (agent_messages); nothing else is stored.
 */

type Skipped = AgentSkippedProviderRow['skipped'] & { name: string; capability?: string; adds?: string; version: string; termsUrl: string; digest?: string | null };

/** One offer per run: its id is derived from the run. */
export const termsApprovalId = (runId: string) => stableUuid('agent-terms-approval', runId);

const TERMS_REASON = 'Providers this run would have used need the team to accept their third-party data terms.';

function gateOf(s: Skipped) {
  return { provider: s.provider, name: s.name, ...(s.capability ? { capability: s.capability } : {}), ...(s.adds ? { adds: s.adds } : {}), version: s.version, digest: s.digest ?? null, url: s.termsUrl };
}

/** `adds` is the model's words: served with a completed job's results only (a failed one is unbilled). */
function skippedOf(s: Skipped, served: boolean) {
  return { provider: s.provider, name: s.name, ...(s.capability ? { capability: s.capability } : {}), ...(s.adds && served ? { adds: s.adds } : {}), reason: 'terms_required' as const, version: s.version, termsUrl: s.termsUrl };
}

/** The providers a run's turn ended on (its own `ask` offer); empty when no offer ended it. */
async function offered(db: Db, r: AgentRun): Promise<Skipped[]> {
  if (r.state !== 'succeeded') return [];
  return (await agentSkippedProviders(db, r.rootId)).filter((x) => x.offered && x.runId === r.id).map((x) => x.skipped as Skipped);
}

/** The SDK's PendingTermsApproval of a finished turn, resolved by a later turn's approve/decline; null without an offer. */
export async function pendingApprovalOf(db: Db, r: AgentRun, laterTurns: AgentRun[]) {
  const providers = await offered(db, r);
  if (!providers.length) return null;
  const id = termsApprovalId(r.id);
  const answer = laterTurns.find((t) => (t.options as AgentRunOptions).exchange?.termsAnswer?.approvalId === id);
  const a = (answer?.options as AgentRunOptions | undefined)?.exchange?.termsAnswer;
  return {
    id,
    kind: 'terms' as const,
    reason: TERMS_REASON,
    resolution: answer && a ? { approved: a.approved, callIds: [], always: false, byRunId: answer.id } : null,
    calls: [] as never[],
    terms: providers.map(gateOf),
  };
}

/** The SDK's AgentExchangeSummary: paid calls and credits (0 once a failed run is unbilled), the terms fields. */
export async function exchangeSummary(db: Db, r: AgentRun, x: AgentRunExchange, st: string) {
  const [calls, skipped] = await Promise.all([agentCatalogCalls(db, r.rootId), agentSkippedProviders(db, r.rootId)]);
  const offer = r.state === 'succeeded' ? skipped.filter((s) => s.offered && s.runId === r.id).map((s) => s.skipped as Skipped) : [];
  return {
    enabled: true,
    ...(x.toolkits ? { toolkits: x.toolkits } : {}),
    requireApproval: false,
    onTermsRequired: x.onTermsRequired ?? 'skip',
    paidCalls: calls.paidCalls,
    creditsUsed: st === 'failed' ? 0 : calls.credits,
    ...(skipped.length ? { skippedProviders: skipped.map((s) => skippedOf(s.skipped as Skipped, agentResultsServed(r.state))) } : {}),
    ...(offer.length
      ? {
          requiresAction: {
            type: 'accept_terms' as const,
            approvalId: termsApprovalId(r.id),
            providers: offer.map((s) => ({
              ...gateOf(s),
              show: { provider: 'firecrawl' as const, capability: 'terms/show' as const, options: { provider: s.provider } },
              accept: { provider: 'firecrawl' as const, capability: 'terms/accept' as const, options: { provider: s.provider, version: s.version, digest: s.digest ?? null, confirmed: true as const } },
            })),
          },
        }
      : {}),
  };
}

/**
 * `exchange.approve` / `decline` on a follow-up turn: the id must be the terms offer of the
 * thread's previous turn (the only one still open: any later turn answered or passed it). The
 * answer is kept with the new run (its agent is told; the old turn's resolution reads it).
 * `callIds` and `always` are ignored on a terms offer, as the SDK documents.
 */
export async function termsAnswer(db: Db, x: AgentRequest['exchange'], prev: AgentRun | undefined): Promise<AgentRunExchange['termsAnswer']> {
  const answer = x?.approve ? { key: 'approve', approvalId: x.approve.approvalId, approved: true } : x?.decline ? { key: 'decline', approvalId: x.decline.approvalId, approved: false } : null;
  if (!answer) return undefined;
  const providers = prev && termsApprovalId(prev.id) === answer.approvalId ? await offered(db, prev) : [];
  if (!providers.length) {
    throw new WdsError('BAD_REQUEST', {
      message: `exchange.${answer.key}.approvalId is not the pending approval of this thread's last turn.`,
      details: [{ code: 'invalid_value', path: ['exchange', answer.key, 'approvalId'], message: 'not the pending approval of the thread\'s last turn' }],
    });
  }
  return { approvalId: answer.approvalId, approved: answer.approved, providers: providers.map((p) => p.provider) };
}
