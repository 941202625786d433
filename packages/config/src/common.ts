import { envBool, envInt, envStr, envUrl } from './index';

/**
 * Settings every process understands. Defaults are the embedded single-machine setup;
 * README documents each one.
 */
export const commonEnvShape = {
  /** External Postgres; when unset `npm start` boots an embedded one. */
  DATABASE_URL: envUrl(),
  /** External Temporal frontend host:port; when unset `npm start` boots the dev server. */
  TEMPORAL_ADDRESS: envStr(),
  TEMPORAL_NAMESPACE: envStr('default'),
  TEMPORAL_CLI_PATH: envStr(),
  WDS_DATA_DIR: envStr('.wds'),
  /** Outbound fetches to private/loopback/link-local targets are refused unless this is true. */
  WDS_ALLOW_PRIVATE_NETWORK: envBool(false),
  WDS_MAX_BODY_BYTES: envInt(20 * 1024 * 1024, 1024),
  CHROMIUM_PATH: envStr(),
  LOG_LEVEL: envStr('info'),
};
