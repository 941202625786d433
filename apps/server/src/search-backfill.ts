import { parseArgs } from 'node:util';
import { backfillSearchIndex, connectDb, migrateDb, resetSearchBackfill } from '@wds/db';
import { createLogger } from '@wds/log';
import { loadKeysEnv } from './env';

/**
 * `npm run search:backfill [-- --batch N] [-- --reset]`: indexes for search the pages stored before
 * the own index existed (or while WDS_SEARCH_INDEX was off), in batches, and prints its progress.
 * Resumable (stop it at any time; the next run continues) and idempotent; control workers run the
 * same backfill in the background at start (WDS_SEARCH_BACKFILL), so this command is for doing it
 * at once or with more force. `--reset` forgets the progress first: every page stored until now is
 * indexed again (after a long time with indexing off). Talks to DATABASE_URL, or to the embedded
 * Postgres of a running `npm start`.
 */
const { values } = parseArgs({ options: { batch: { type: 'string', default: '500' }, reset: { type: 'boolean', default: false } } });
const env = loadKeysEnv();
const log = createLogger({ name: 'search-backfill', level: env.LOG_LEVEL, to: 'stderr' });
const batchSize = Number(values.batch);
if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
  process.stderr.write('--batch must be a whole number from 1 to 10000\n');
  process.exit(2);
}
const dbh = connectDb(env.DATABASE_URL ?? `postgres://postgres:postgres@127.0.0.1:${env.WDS_EMBEDDED_PG_PORT}/wds`, { max: 2 });
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());
try {
  await migrateDb(dbh);
  if (values.reset) await resetSearchBackfill(dbh.db);
  const t0 = performance.now();
  const done = await backfillSearchIndex(dbh.db, {
    batchSize,
    signal: stop.signal,
    onBatch: (b) => process.stdout.write(`${b.source}: ${b.rows} stored pages read, ${b.indexed} indexed${b.finished ? ' (source done)' : ''}\n`),
  });
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  log.info({ ...done, seconds: Number(secs) }, 'search backfill run ended');
  process.stdout.write(
    done.finished
      ? `done: ${done.rows} stored pages read, ${done.indexed} index rows written in ${secs} s; every stored page is indexed\n`
      : `stopped: ${done.rows} stored pages read, ${done.indexed} index rows written in ${secs} s; run again to continue${stop.signal.aborted ? '' : ' (another process holds a source: it will finish it)'}\n`,
  );
} finally {
  await dbh.close();
}
