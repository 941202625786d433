import { agentResultsServed } from '@wds/contracts';
import { agentBillableItems, chargeCredits, reduceReservation, releaseJobReservations, reserveCredits, syncAgentJobBill, type Db } from '@wds/db';
import { creditsUsed } from '@wds/metrics';
import type { RunContext } from './context';

/**
 * Agent credits (packages/db README "Credits"): every step reserves its estimate under the job
 * (the root run: sub-agents share their job's maxCredits) against maxCredits and the team's
 * credit limit before it works; a refused reservation means the step does not run. What each
 * item really cost (≤ its reservation) is kept on its transcript row. When the job succeeds,
 * every reservation is converted into a charge of that cost; when it fails for any reason,
 * they are all released: failed runs cost 0 (spec: Limits; Firecrawl's docs), and so nothing
 * they produced is served (@wds/contracts agentResultsServed). What is served is billed, once.
 */

/**
 * Credits of model tokens (ours: Firecrawl publishes no per-token agent price, only "dynamic").
 * 1,000 tokens a credit puts a typical 20-step run with pages in its context at a few hundred
 * credits, the figure Firecrawl's docs give for most runs.
 */
export const AGENT_TOKENS_PER_CREDIT = 1_000;
export const tokensToCredits = (tokens: number) => Math.max(1, Math.ceil(tokens / AGENT_TOKENS_PER_CREDIT));

export type Reservation = { granted: true } | { granted: false; message: string };

export const reservationKey = (runId: string, item: string) => `agent:${runId}:${item}`;

/** Reserves `amount` for one item of work of this run (idempotent on its key; 0 reserves nothing). */
export async function reserveForRun(db: Db, c: RunContext, key: string, amount: number): Promise<Reservation> {
  if (amount <= 0) return { granted: true };
  const r = await reserveCredits(db, { teamId: c.run.teamId, jobId: c.root.id, kind: 'agent', amount, key, jobCap: c.rootOptions.maxCredits, teamCap: c.teamCap });
  if (r.granted) return { granted: true };
  const message = r.reason === 'job_cap'
    ? `The agent reached its credit limit: the next step needs ${amount} more credits than the ${r.cap} its maxCredits allows (${r.balance.used + r.balance.reserved} already spoken for).`
    : `The agent stopped: the team's credit limit of ${r.cap} credits is used up.`;
  return { granted: false, message };
}

/**
 * Once an item's real cost is known and below its reservation (a model step reserves for the
 * longest reply it may get), the reservation is swapped for one of the real cost, so the cap
 * counts what was spent rather than estimates. Returns the key that now holds the item (its
 * charge converts it). One ledger transaction (reduceReservation): a sub-agent reserving at the
 * same moment sees either the estimate or the cost held, never neither, so it cannot take the
 * difference and push the item's own cost over the cap. Idempotent.
 */
export async function shrinkReservation(db: Db, c: RunContext, key: string, estimate: number, actual: number): Promise<string> {
  if (actual >= estimate) return key;
  const actualKey = `${key}:actual`;
  const caps = { jobCap: c.rootOptions.maxCredits, teamCap: c.teamCap };
  await reduceReservation(db, { teamId: c.run.teamId, jobId: c.root.id, kind: 'agent', reservationKey: key, key: actualKey, amount: actual }, caps);
  return actualKey;
}

/** Success: each reservation becomes a charge of what its item cost; anything left is released. Returns the job's total. */
export async function chargeJob(db: Db, c: RunContext): Promise<number> {
  let total = 0;
  for (const item of await agentBillableItems(db, c.root.id)) {
    await chargeCredits(db, { teamId: c.root.teamId, jobId: c.root.id, kind: 'agent', amount: item.credits, key: `charge:${item.reservationKey}`, reservationKey: item.reservationKey });
    total += item.credits;
  }
  await releaseJobReservations(db, c.root.id);
  return total;
}

/** Any other end: nothing is billed. */
export async function releaseJob(db: Db, c: RunContext): Promise<void> {
  await releaseJobReservations(db, c.root.id);
}

/**
 * Work of the job committed after its bill was made: a sub-agent's step or tool that was in flight
 * when the job ended. A succeeded job's results are served, so that work is charged like the rest
 * (each item's charge key is its reservation's: nothing twice) and the job's `creditsUsed` follows
 * its ledger; a failed job's is released. Called by a sub-agent that ends after its job, and by the
 * job once its row is written (an item committed between its charge and its row).
 */
export async function settleLateWork(db: Db, c: RunContext, rootState: string): Promise<void> {
  if (!agentResultsServed(rootState)) return releaseJob(db, c);
  await chargeJob(db, c);
  const added = await syncAgentJobBill(db, c.root.id);
  if (added > 0) creditsUsed.inc({ kind: 'agent' }, added);
}
