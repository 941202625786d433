import { boundedKey, chargeCredits, extractSourcePage, getTeamLimits, loadExtractPage, reserveCredits, storeExtractPage, type Db, type NewExtractPage } from '@wds/db';
import { countTokens, extractJson, isLlmError, tokenCredits, emptyUsage, type LlmClient, type Usage } from '@wds/llm';
import { creditsUsed } from '@wds/metrics';
import type { ExtractPageInput, ExtractPageResult } from '@wds/workflows/extract';
import { observeModelCall, withinDeadline } from '../llm/model-step';
import { loadExtractInfo, requestText } from './job';
import { countFilled } from './merge';
import type { ExtractSourceDocument } from './page';

export interface ExtractLlmDeps {
  db: Db;
  client: LlmClient;
}

/** Output tokens expected of a page's reply, for the reservation (the charge is the real count). */
const EXPECTED_REPLY_TOKENS = 2_000;
const PROMPT_OVERHEAD_TOKENS = 800;

/**
 * The model step of one page (wds-llm). Idempotent on the page's document: a step that finds
 * its row has nothing to do. Budget first: the step's estimated credits are reserved against the
 * team's credit limit, and a refusal stops the job's page steps (partial data, with a warning).
 * The charge converts the reservation with the tokens actually used (15 a credit) under a key of
 * the page, so a retried step bills once; it is written before the row, so a step killed
 * between the two redoes the call and finds its charge already made.
 *
 * A page the model cannot extract from (422s, a provider refusing the request) is recorded as
 * failed and its tokens billed; the job goes on. Transient failures (429, 5xx, timeouts) are
 * thrown for Temporal to retry until the job's deadline.
 */
export async function extractPage(deps: ExtractLlmDeps, { jobId, docSeq, deadlineMs }: ExtractPageInput): Promise<ExtractPageResult> {
  const done = await loadExtractPage(deps.db, jobId, docSeq);
  if (done) return { status: done.status, outOfCredits: done.reason === OUT_OF_CREDITS };
  const job = await loadExtractInfo(deps.db, jobId);
  const src = await extractSourcePage(deps.db, jobId, docSeq);
  if (!src) return { status: 'skipped' };
  const doc = src.document as ExtractSourceDocument;
  const base: Omit<NewExtractPage, 'status'> = { jobId, docSeq, url: src.url, named: src.depth === 0 };
  const skip = async (reason: string, outOfCredits = false): Promise<ExtractPageResult> => {
    await storeExtractPage(deps.db, { ...base, status: 'skipped', reason });
    return { status: 'skipped', outOfCredits };
  };

  if (doc.metadata.statusCode >= 400) return skip(`the page answered HTTP ${doc.metadata.statusCode}`);
  if (!doc.markdown.trim()) return skip('the page has no text');

  const limit = (await getTeamLimits(deps.db, job.teamId)).creditLimit;
  const reservationKey = boundedKey('extract', jobId, 'reserve', String(docSeq));
  const estimate = Math.ceil((Math.min(countTokens(doc.markdown), deps.client.config.limits.contextWindow) + PROMPT_OVERHEAD_TOKENS + EXPECTED_REPLY_TOKENS) / 15);
  const reserved = await reserveCredits(deps.db, { teamId: job.teamId, jobId, kind: 'extract', amount: estimate, key: reservationKey, teamCap: limit });
  if (!reserved.granted) return skip(OUT_OF_CREDITS, true);

  const bill = async (usage: Usage) => {
    const credits = tokenCredits(usage);
    const { charged } = await chargeCredits(deps.db, { teamId: job.teamId, jobId, kind: 'extract', amount: credits, key: boundedKey('extract', jobId, 'page', String(docSeq)), reservationKey });
    if (charged) creditsUsed.inc({ kind: 'extract' }, credits);
    return { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, credits };
  };

  const model = deps.client.config.model;
  try {
    const r = await withinDeadline(deadlineMs, (signal) =>
      observeModelCall(model, 'extract', (x) => tokenCredits(x.usage), () =>
        extractJson(deps.client, { page: { markdown: doc.markdown, url: doc.metadata.url }, schema: job.options.schema, prompt: requestText(job.options), signal }),
      ),
    );
    if (!r.ok) return skip(OUT_OF_TIME);
    const spent = await bill(r.value.usage);
    await storeExtractPage(deps.db, { ...base, status: 'extracted', data: r.value.data, filled: countFilled(r.value.data), reason: r.value.warning ?? null, ...spent });
    return { status: 'extracted' };
  } catch (e) {
    if (!isLlmError(e) || e.retryable) throw e;
    const spent = await bill(e.usage ?? emptyUsage());
    await storeExtractPage(deps.db, { ...base, status: 'failed', reason: `${e.code}: ${e.message}`, ...spent });
    return { status: 'failed' };
  }
}

/** The reason of pages skipped because the team's credit limit refused their step. */
export const OUT_OF_CREDITS = "the team's credit limit was reached";
/** The reason of pages whose step was cut by the job's deadline. */
export const OUT_OF_TIME = 'the extract ran out of time before the model read this page';
