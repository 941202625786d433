import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { connectDb, createKey, ensureTeam, migrateDb, newKey } from '@wds/db';
import { createLogger } from '@wds/log';
import { resolveSigningSecret } from '@wds/storage';
import { findTemporalCli, leaveSignalsToLauncher, spawnApp, startEmbeddedPostgres, startTemporalDevServer, type Stoppable } from '@wds/launch';
import { loadServerEnv } from './env';
import { supervise, type Supervised } from './supervise';

/**
 * `npm start`: the whole service on one machine. External Postgres/Temporal are used when
 * DATABASE_URL/TEMPORAL_ADDRESS are set; otherwise embedded ones are started with their data
 * under WDS_DATA_DIR. The API and one worker then run as child processes, the same programs
 * `npm run api` and `npm run worker` start on a fleet; a child that dies is restarted.
 */
const env = loadServerEnv();
const dataDir = resolve(env.WDS_DATA_DIR);
mkdirSync(dataDir, { recursive: true });
const logger = createLogger({ name: 'server', level: env.LOG_LEVEL });
const log = (m: string) => logger.info(m);
// The ready banner is for the person who ran `npm start` (it carries the bootstrap key), not a
// log event: plain text, never through the logger, which would redact the key.
const say = (m: string, to: NodeJS.WriteStream = process.stdout) => to.write(`wds: ${m}\n`);
const infra: Stoppable[] = [];
const apps: Supervised[] = [];
let stopping = false;

async function shutdown(code: number) {
  if (stopping) return;
  stopping = true;
  // The API first: its in-flight requests need the worker to finish. Each gets its drain time
  // (WDS_SHUTDOWN_GRACE_MS) and a margin before SIGKILL.
  for (const a of apps) await a.stop();
  for (const s of infra.reverse()) await s.stop().catch(() => {});
  process.exit(code);
}
// Only these stop the stack; a child that dies is restarted (see supervise.ts).
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void shutdown(0));

/** What a machine without the Temporal CLI is told, in one line: what is missing and how to get it. */
const GET_TEMPORAL =
  'install it with `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` (or `brew install temporal`) and put it on PATH or in TEMPORAL_CLI_PATH, or set TEMPORAL_ADDRESS to a running Temporal server';

/** A missing tool, said in one line before anything starts (no stack trace, nothing left running). */
function missingTemporal(): string | null {
  if (env.TEMPORAL_ADDRESS) return null;
  let cli: string | null;
  try {
    cli = findTemporalCli(env.TEMPORAL_CLI_PATH);
  } catch {
    return `the Temporal CLI is missing: TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} does not exist; ${GET_TEMPORAL}`;
  }
  if (cli || env.WDS_TEMPORAL_DOWNLOAD) return null;
  return `the Temporal CLI is missing (looked at TEMPORAL_CLI_PATH, PATH and ~/go/bin/temporal; WDS_TEMPORAL_DOWNLOAD=false); ${GET_TEMPORAL}`;
}
/** A tool the machine lacks: said to the person who ran `npm start` in one plain line, not logged as a failure. */
class MissingTool extends Error {}

const missing = missingTemporal();
if (missing) {
  say(`cannot start: ${missing}`, process.stderr);
  process.exit(1);
}

/** The API or the worker, restarted when it dies; a crash loop stops everything with exit code 1. */
const supervised = (name: 'api' | 'worker', childEnv: Record<string, string>) =>
  supervise({
    name,
    start: () => spawnApp(name, childEnv, { echo: true }),
    log,
    maxCrashes: env.WDS_CRASH_LOOP_LIMIT,
    windowMs: 60_000,
    stopGraceMs: env.WDS_SHUTDOWN_GRACE_MS + 15_000,
    onGiveUp: () => void shutdown(1),
  });

try {
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    log(`starting embedded Postgres (data in ${dataDir}/postgres)`);
    const pg = await startEmbeddedPostgres({ dataDir, port: env.WDS_EMBEDDED_PG_PORT });
    leaveSignalsToLauncher();
    infra.push(pg);
    databaseUrl = pg.url;
  }
  let temporalAddress = env.TEMPORAL_ADDRESS;
  if (!temporalAddress) {
    const download = !findTemporalCli(env.TEMPORAL_CLI_PATH);
    log(download ? 'no Temporal CLI found: downloading the Temporal dev server (needs internet)' : 'starting Temporal dev server');
    const t = await startTemporalDevServer({
      dataDir,
      port: env.WDS_EMBEDDED_TEMPORAL_PORT,
      uiPort: env.WDS_EMBEDDED_TEMPORAL_UI_PORT || undefined,
      cliPath: env.TEMPORAL_CLI_PATH,
      sqliteSync: env.WDS_EMBEDDED_TEMPORAL_SYNC,
    }).catch((e: Error) => {
      if (!download) throw e;
      const cause = e.message.split('\n').map((l) => l.trim()).find(Boolean) ?? 'unknown error';
      throw new MissingTool(`the Temporal CLI is missing and downloading its dev server failed (${cause}); ${GET_TEMPORAL}`);
    });
    infra.push(t);
    temporalAddress = t.address;
  }

  // The bootstrap key: WDS_API_KEY if given, else one generated once and kept in the data dir.
  const dbh = connectDb(databaseUrl, { max: 2 });
  await migrateDb(dbh);
  const keyFile = resolve(dataDir, 'bootstrap-api-key');
  const apiKey = env.WDS_API_KEY ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : newKey());
  if (!env.WDS_API_KEY) writeFileSync(keyFile, apiKey, { mode: 0o600 });
  await createKey(dbh.db, await ensureTeam(dbh.db, 'default'), { key: apiKey, name: 'bootstrap' });
  await dbh.close();

  // API and worker must sign and check file links with one secret: resolved here once (kept in
  // the data dir unless WDS_FILE_SIGNING_SECRET is set) and handed to both.
  const childEnv = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    WDS_DATA_DIR: dataDir,
    PORT: String(env.PORT),
    WDS_FILE_SIGNING_SECRET: resolveSigningSecret(env.WDS_FILE_SIGNING_SECRET, dataDir),
  };
  const apiProc = await supervised('api', childEnv);
  apps.push(apiProc);
  const api = apiProc.current();
  // A restarted API listens where the first one did (PORT=0 picked a port once).
  childEnv.PORT = new URL(api.url!).port;
  // The one embedded worker serves every queue with activities, the browser and media included (it
  // skips wds-browser / wds-media with a warning when Chromium / ffmpeg is missing); file links point at the API.
  apps.push(
    await supervised('worker', {
      ...childEnv,
      WDS_WORKER_QUEUES: env.WDS_WORKER_QUEUES ?? 'wds-control,wds-fetch,wds-browser,wds-llm,wds-media',
      WDS_PUBLIC_URL: env.WDS_PUBLIC_URL ?? api.url!,
    }),
  );

  say(`ready: ${api.url}  (API key: ${apiKey})`);
  say(`try: curl -s ${api.url}/v2/scrape -H 'Authorization: Bearer ${apiKey}' -H 'Content-Type: application/json' -d '{"url":"https://example.com"}'`);
} catch (e) {
  // A missing tool is the user's to fix: one plain line saying how. Anything else is a log event.
  if (e instanceof MissingTool) say(`cannot start: ${e.message}`, process.stderr);
  else logger.error({ err: e }, 'failed to start');
  await shutdown(1);
}
