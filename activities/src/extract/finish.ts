import {
  boundedKey,
  chargeCredits,
  completeExtractJob,
  endExtractJob,
  extractFrontierTally,
  extractPageRows,
  extractTokensUsed,
  getTeamLimits,
  jobCreditsUsed,
  loadExtractJob,
  releaseJobReservations,
  reserveCredits,
  type Db,
  type ExtractPageRow,
} from '@wds/db';
import { chooseAmongValues, compileUserSchema, isLlmError, tokenCredits, type LlmClient, type Usage } from '@wds/llm';
import { creditsUsed, jobsFinished } from '@wds/metrics';
import type { MergeExtractInput } from '@wds/workflows/extract';
import { OUT_OF_CREDITS, OUT_OF_TIME } from './extract-page';
import { observeModelCall, withinDeadline } from '../llm/model-step';
import { loadExtractInfo, requestText, type ExtractJobInfo } from './job';
import { mergePages, type Merged } from './merge';

/** Conflicts settled by one model call at most; the rest keep the most relevant page's value. */
const MAX_CONFLICTS_PER_CALL = 50;

/**
 * The merge step (wds-llm): the page results become one answer (./merge.ts), a model call
 * settles the values pages disagree on (only then, and only before the deadline; if it fails,
 * page relevance decides), the answer is checked against the schema, and the job completes
 * with its warnings (pages that could not be fetched or read, the time or credit budget). A job
 * with no page extracted fails, saying why. Idempotent: an ended job is left as it is.
 */
export async function mergeExtract(deps: { db: Db; client: LlmClient }, { jobId, deadlineMs }: MergeExtractInput): Promise<{ status: string }> {
  const row = await loadExtractJob(deps.db, jobId);
  if (row && row.status !== 'processing') return { status: row.status };
  const job = await loadExtractInfo(deps.db, jobId);
  const rows = await extractPageRows(deps.db, jobId);
  const tally = await extractFrontierTally(deps.db, jobId);
  // row.warning: what the steps before noted (a web search that failed or found nothing).
  const warnings = [...job.options.warnings, ...(row?.warning ? [row.warning] : []), ...pageWarnings(rows, tally, job.options.maxPages)];
  const extracted = rows.filter((r) => r.status === 'extracted');

  if (!extracted.length) {
    const error = `The extract found nothing to answer from: ${warnings.join(' ') || 'no page could be fetched.'}`;
    await endExtract(deps.db, jobId, 'failed', error);
    return { status: 'failed' };
  }

  const merged = mergePages(
    extracted.map((r) => ({ url: r.url, data: r.data, named: r.named, filled: r.filled, order: r.docSeq })),
    job.options.schema,
  );
  let mergeUsage: Usage | null = null;
  if (merged.conflicts.length) {
    const settled = await settleConflicts(deps, job, merged, deadlineMs);
    mergeUsage = settled.usage;
    if (settled.warning) warnings.push(settled.warning);
  }

  let data = merged.data;
  let sources = merged.sources;
  if (job.options.schema) {
    const check = await (await compileUserSchema(job.options.schema)).validate(data);
    if (!check.ok) {
      // Each page's own answer conformed: the most relevant one stands in for the merge.
      const best = [...extracted].sort((a, b) => Number(b.named) - Number(a.named) || b.filled - a.filled || a.docSeq - b.docSeq)[0]!;
      data = best.data;
      sources = { $: [best.url] };
      warnings.push(`The merged answer did not conform to the schema (${check.errors.slice(0, 3).join('; ')}), so it is the answer of the most relevant page alone (${best.url}).`);
    }
  }

  const tokensUsed = (await extractTokensUsed(deps.db, jobId)) + (mergeUsage?.totalTokens ?? 0);
  const changed = await completeExtractJob(deps.db, jobId, {
    data,
    sources,
    warning: warnings.length ? warnings.join(' ') : null,
    tokensUsed,
    creditsUsed: await jobCreditsUsed(deps.db, jobId),
  });
  await releaseJobReservations(deps.db, jobId);
  if (changed) jobsFinished.inc({ kind: 'extract', status: 'completed' });
  return { status: 'completed' };
}

/**
 * One model call over the conflicts (their candidate values and sources, never page text),
 * billed like a page step. Any failure leaves the deterministic choice (page relevance) with a
 * warning, except a transient one before the deadline, which Temporal retries.
 */
async function settleConflicts(deps: { db: Db; client: LlmClient }, job: ExtractJobInfo, merged: Merged, deadlineMs: number): Promise<{ usage: Usage | null; warning?: string }> {
  const conflicts = merged.conflicts.slice(0, MAX_CONFLICTS_PER_CALL);
  const fallback = (why: string) => ({ usage: null, warning: `${merged.conflicts.length} value(s) differed between pages and were taken from the most relevant page (${why}).` });
  if (Date.now() >= deadlineMs) return fallback('no time was left to ask the model');
  const jobId = job.id;
  const reservationKey = boundedKey('extract', jobId, 'reserve', 'merge');
  const estimate = Math.ceil((JSON.stringify(conflicts).length / 3 + 1_000) / 15);
  const limit = (await getTeamLimits(deps.db, job.teamId)).creditLimit;
  const reserved = await reserveCredits(deps.db, { teamId: job.teamId, jobId, kind: 'extract', amount: estimate, key: reservationKey, teamCap: limit });
  if (!reserved.granted) return fallback(OUT_OF_CREDITS);
  const bill = async (usage: Usage) => {
    const credits = tokenCredits(usage);
    const { charged } = await chargeCredits(deps.db, { teamId: job.teamId, jobId, kind: 'extract', amount: credits, key: boundedKey('extract', jobId, 'merge'), reservationKey });
    if (charged) creditsUsed.inc({ kind: 'extract' }, credits);
  };
  try {
    const r = await withinDeadline(deadlineMs, (signal) =>
      observeModelCall(deps.client.config.model, 'extract_merge', (x) => tokenCredits(x.usage), () => chooseAmongValues(deps.client, { request: requestText(job.options), conflicts, signal })),
    );
    if (!r.ok) return fallback('the time ran out while the model chose');
    await bill(r.value.usage);
    for (const [path, index] of r.value.choices) merged.applyChoice(path, index);
    const rest = merged.conflicts.length - conflicts.length;
    return { usage: r.value.usage, warning: rest > 0 ? `${rest} more differing value(s) were taken from the most relevant page.` : undefined };
  } catch (e) {
    if (!isLlmError(e)) throw e;
    if (e.retryable && Date.now() < deadlineMs) throw e;
    if (e.usage) await bill(e.usage);
    return fallback(`the model could not choose: ${e.code}`);
  }
}

/** What the answer is missing, in words: pages not fetched, skipped or failed, time and credit limits. */
function pageWarnings(rows: ExtractPageRow[], tally: Awaited<ReturnType<typeof extractFrontierTally>>, maxPages: number): string[] {
  const out: string[] = [];
  if (tally.failed) out.push(`${tally.failed} URL(s) could not be fetched (${tally.failures.join('; ')}${tally.failed > tally.failures.length ? '; …' : ''}).`);
  if (tally.unfetched) out.push(`${tally.unfetched} URL(s) were not fetched: the extract reads at most ${maxPages} pages.`);
  const by = (pred: (r: ExtractPageRow) => boolean) => rows.filter(pred);
  const late = (r: ExtractPageRow) => r.status === 'skipped' && r.reason === OUT_OF_TIME;
  // Pages without a row: their step was still failing (or never started) when the time ran out.
  const unread = tally.documents - rows.length + by(late).length;
  if (unread > 0) out.push(`${unread} page(s) were not read: the extract's time budget ran out (the model provider was slow or failing); the data is partial.`);
  const credits = by((r) => r.reason === OUT_OF_CREDITS);
  if (credits.length) out.push(`${credits.length} page(s) were not read: ${OUT_OF_CREDITS}; the data is partial.`);
  const skipped = by((r) => r.status === 'skipped' && r.reason !== OUT_OF_CREDITS && !late(r));
  if (skipped.length) out.push(`${skipped.length} page(s) were skipped (${skipped.slice(0, 3).map((r) => `${r.url}: ${r.reason}`).join('; ')}).`);
  const failed = by((r) => r.status === 'failed');
  if (failed.length) out.push(`The model could not extract from ${failed.length} page(s) (${failed.slice(0, 3).map((r) => `${r.url}: ${r.reason}`).join('; ')}).`);
  const truncated = by((r) => r.status === 'extracted' && !!r.reason);
  if (truncated.length) out.push(`${truncated.length} page(s) were truncated to fit the model's context window.`);
  return out;
}

/** Ends the job as failed or cancelled with its final figures, and gives back what it still has reserved. */
export async function endExtract(db: Db, jobId: string, status: 'failed' | 'cancelled', error: string | null): Promise<boolean> {
  // Reservations go first: once the row has ended, no sweeper comes back to it, so a crash between
  // the two would leave them held; released first, a retry (or the sweeper) releases again and ends.
  await releaseJobReservations(db, jobId);
  const changed = await endExtractJob(db, jobId, status, error, { tokensUsed: await extractTokensUsed(db, jobId), creditsUsed: await jobCreditsUsed(db, jobId) });
  if (changed) jobsFinished.inc({ kind: 'extract', status });
  return changed;
}
