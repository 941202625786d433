// Starting WDS's processes: embedded Postgres, the Temporal dev server, and the API and workers as child processes.
export {
  DEV_SERVER_DYNAMIC_CONFIG,
  findTemporalCli,
  freePort,
  leaveSignalsToLauncher,
  startEmbeddedPostgres,
  startTemporalDevServer,
  stopChild,
  waitForTemporal,
  type Stoppable,
  type TemporalDevOptions,
} from './infra';
export { spawnApp, spawnUntilReady, type AppProcess } from './processes';
