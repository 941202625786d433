import { envBool, envInt, exitOnConfigError, loadEnv, z } from '@wds/config';
import { commonEnvShape } from '@wds/config/common';

export function loadServerEnv(source: Record<string, string | undefined> = process.env) {
  try {
    return loadEnv(
      {
        ...commonEnvShape,
        PORT: envInt(3002, 0, 65535),
        WDS_API_KEY: z.string().min(8, 'must be at least 8 characters').max(200).optional(),
        /** Ports of the embedded services (used only when DATABASE_URL / TEMPORAL_ADDRESS are unset). */
        WDS_EMBEDDED_PG_PORT: envInt(54329, 1, 65535),
        WDS_EMBEDDED_TEMPORAL_PORT: envInt(7233, 1, 65535),
        WDS_EMBEDDED_TEMPORAL_UI_PORT: envInt(8233, 0, 65535),
        /** SQLite sync mode of the embedded Temporal's file: normal survives process crashes, full also power cuts. */
        WDS_EMBEDDED_TEMPORAL_SYNC: z.enum(['normal', 'full']).default('normal'),
        /** Without a Temporal CLI on the machine, let the Temporal SDK download its dev server (needs internet). */
        WDS_TEMPORAL_DOWNLOAD: envBool(true),
        /** A child (API, worker) that dies this many times within a minute is not restarted: npm start exits 1. */
        WDS_CRASH_LOOP_LIMIT: envInt(5, 1, 1000),
      },
      source,
    );
  } catch (e) {
    return exitOnConfigError(e);
  }
}

/** `npm run keys`: DATABASE_URL, else the embedded Postgres of a running `npm start`. */
export function loadKeysEnv(source: Record<string, string | undefined> = process.env) {
  try {
    return loadEnv({ DATABASE_URL: commonEnvShape.DATABASE_URL, WDS_EMBEDDED_PG_PORT: envInt(54329, 1, 65535), LOG_LEVEL: commonEnvShape.LOG_LEVEL }, source);
  } catch (e) {
    return exitOnConfigError(e);
  }
}

