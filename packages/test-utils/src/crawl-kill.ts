import assert from 'node:assert/strict';
import type { Stack } from './stack';
import { activityStarts, runningActivities } from './temporal';
import { until } from './wait';

/**
 * Steps of the crawl kill tests (a worker SIGKILLed mid-crawl): each waits on a condition, never
 * on time, so the kill lands mid-crawl and inside an activity however loaded the machine is.
 */

/** What the tests read of a crawl's status: the JS SDK's getCrawlStatus, without the SDK as a dependency here. */
export interface CrawlStatusReader {
  getCrawlStatus(id: string, opts?: { autoPaginate?: boolean }): Promise<{ status: string; completed: number; data: { markdown?: string; metadata?: { sourceURL?: string } }[] }>;
}

/** Waits until the crawl has stored at least `pages` pages; answers its status then. */
export function untilCrawled(fc: CrawlStatusReader, id: string, pages: number): Promise<{ status: string; completed: number }> {
  return until(
    async () => {
      const s = await fc.getCrawlStatus(id, { autoPaginate: false });
      return s.completed >= pages || s.status !== 'scraping' ? s : null;
    },
    `crawl ${id} to store ${pages} pages`,
    { timeoutMs: 120_000, everyMs: 100 },
  );
}

/**
 * Waits until `atLeast` activities of `type` run in the workflow (started by a worker, not
 * finished), so a kill right after certainly interrupts one (with two, one finishing meanwhile
 * still leaves one).
 */
export async function untilActivityRuns(stack: Stack, workflowId: string, type: string, atLeast = 1): Promise<void> {
  await until(
    async () => (await runningActivities(stack.namespace, workflowId)).filter((a) => a.type === type).length >= atLeast,
    `${atLeast} running ${type} of ${workflowId}`,
    { timeoutMs: 60_000, everyMs: 20 },
  );
}

/** Waits until the crawl has ended (any status); answers its status. */
export function crawlEnd(fc: CrawlStatusReader, id: string, timeoutMs = 240_000): Promise<{ status: string; completed: number }> {
  return until(
    async () => {
      const s = await fc.getCrawlStatus(id, { autoPaginate: false });
      return s.status !== 'scraping' ? s : null;
    },
    `crawl ${id} to end`,
    { timeoutMs, everyMs: 100 },
  );
}

/** What the crawl left in Postgres: documents, URLs not done, credit ledger rows (one charge per stored page). */
export async function crawlBooks(stack: Stack, jobId: string): Promise<{ docs: number; unfinished: number; charges: number }> {
  const r = await stack.db.pool.query(
    `SELECT (SELECT count(*)::int FROM crawl_documents WHERE job_id = $1) AS docs,
            (SELECT count(*)::int FROM crawl_urls WHERE job_id = $1 AND status <> 'done') AS unfinished,
            (SELECT count(*)::int FROM credit_ledger WHERE job_id = $1) AS charges`,
    [jobId],
  );
  return r.rows[0] as { docs: number; unfinished: number; charges: number };
}

/**
 * The crawl of one of the crawl site's script-rendered trees (/js/i, /app/i) ended with exactly one
 * document per page, each with its rendered content; answers the documents.
 */
export async function assertRenderedOncePerPage(fc: CrawlStatusReader, id: string, pages: number) {
  const all = await fc.getCrawlStatus(id);
  const urls = all.data.map((d) => d.metadata!.sourceURL!);
  assert.equal(urls.length, pages, 'every page has a document');
  assert.equal(new Set(urls).size, pages, 'no page has two documents');
  for (const d of all.data) {
    const i = Number(new URL(d.metadata!.sourceURL!).pathname.split('/').pop());
    assert.match(d.markdown!, new RegExp(`Rendered page ${i}\\b`), `${d.metadata!.sourceURL} has its rendered content`);
  }
  return all.data;
}

/** Proof that a kill interrupted a render: a browser page activity needed a second attempt, on another worker than the killed one. */
export async function assertRenderRetried(stack: Stack, workflowId: string, killedPid: number): Promise<void> {
  const retried = (await activityStarts(stack.namespace, workflowId)).filter((a) => a.type === 'renderCrawlPage' && a.attempt > 1);
  assert.ok(retried.length > 0, 'a render of the killed worker was retried');
  assert.ok(retried.every((a) => a.pid !== killedPid), 'on the new browser worker');
}
