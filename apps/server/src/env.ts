import { envBool, envInt, exitOnConfigError, loadEnv, z } from '@wds/config';
import { commonEnvShape } from '@wds/config/common';

/** `npm start`'s settings (the embedded launcher); docs/configuration.md is generated from this shape. */
export const serverEnvShape = {
  ...commonEnvShape,
  /** The port `npm start` gives its API (`0` picks a free one). */
  PORT: envInt(3002, 0, 65535),
  /** The bootstrap key `npm start` gives its API; unset, one generated once and kept in `$WDS_DATA_DIR/bootstrap-api-key`. */
  WDS_API_KEY: z.string().min(8, 'must be at least 8 characters').max(200).optional(),
  /** Port of the embedded Postgres (used only when `DATABASE_URL` is unset; the CLIs look for it there). */
  WDS_EMBEDDED_PG_PORT: envInt(54329, 1, 65535),
  /** Port of the embedded Temporal dev server's frontend (used only when `TEMPORAL_ADDRESS` is unset). */
  WDS_EMBEDDED_TEMPORAL_PORT: envInt(7233, 1, 65535),
  /** Port of the embedded Temporal dev server's web UI; `0` turns the UI off. */
  WDS_EMBEDDED_TEMPORAL_UI_PORT: envInt(8233, 0, 65535),
  /**
   * SQLite sync mode of the embedded Temporal's file (WAL journal). `normal`: survives any process crash,
   * syncs the disk only at checkpoints (a scrape is about 10 ms faster); `full`: also survives an OS crash
   * or a power cut.
   */
  WDS_EMBEDDED_TEMPORAL_SYNC: z.enum(['normal', 'full']).default('normal'),
  /**
   * Without a Temporal CLI on the machine, let the Temporal SDK download its dev server (needs internet).
   * `false`: stop at once, saying how to install the CLI.
   */
  WDS_TEMPORAL_DOWNLOAD: envBool(true),
  /**
   * A child (API, worker) that dies this many times within a minute is not restarted: the launcher stops
   * everything and exits 1. Below that, a child that dies is restarted after a backoff that doubles with
   * each recent crash (0.5 s, 1 s, 2 s, … at most 10 s).
   */
  WDS_CRASH_LOOP_LIMIT: envInt(5, 1, 1000),
};

export function loadServerEnv(source: Record<string, string | undefined> = process.env) {
  try {
    return loadEnv(serverEnvShape, source);
  } catch (e) {
    return exitOnConfigError(e);
  }
}

/** The operator CLIs (`npm run keys`, `catalog`, `search:backfill`): DATABASE_URL, else the embedded Postgres of a running `npm start`. */
export const keysEnvShape = {
  DATABASE_URL: commonEnvShape.DATABASE_URL,
  WDS_EMBEDDED_PG_PORT: serverEnvShape.WDS_EMBEDDED_PG_PORT,
  LOG_LEVEL: commonEnvShape.LOG_LEVEL,
};

export function loadKeysEnv(source: Record<string, string | undefined> = process.env) {
  try {
    return loadEnv(keysEnvShape, source);
  } catch (e) {
    return exitOnConfigError(e);
  }
}

