import type { FastifyInstance } from 'fastify';
import type { Logger } from '@wds/log';

/**
 * SIGTERM/SIGINT: stop accepting connections, let in-flight requests finish, then release
 * Temporal and Postgres and exit. A load balancer retries refused connections elsewhere, so
 * nothing a client sent is dropped — except requests still running after `graceMs`, whose
 * connections are cut then so a stuck request cannot hold a rolling deploy (their jobs go on
 * in the workers; a scrape's result stays readable by id).
 */
export function drainOnSignal(app: FastifyInstance, log: Logger, opts: { graceMs: number; release: () => Promise<void> }): void {
  let closing = false;
  const onSignal = async (sig: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    log.info({ signal: sig, graceMs: opts.graceMs }, 'draining in-flight requests');
    // Last resort if releasing a connection hangs: the process must end.
    setTimeout(() => {
      log.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, opts.graceMs + 5_000).unref();
    // server.close() reaps idle keep-alive sockets once; a socket whose request ends later would
    // otherwise hold the server open until its keep-alive timeout (72 s).
    const reaper = setInterval(() => app.server.closeIdleConnections(), 100);
    const cut = setTimeout(() => {
      log.warn({ graceMs: opts.graceMs }, 'requests still running after the grace time; closing their connections');
      app.server.closeAllConnections();
    }, opts.graceMs);
    try {
      await app.close();
    } catch (e) {
      log.error({ err: e }, 'close failed');
    }
    clearInterval(reaper);
    clearTimeout(cut);
    await opts.release().catch((e: Error) => log.error({ err: e }, 'release failed'));
    process.exit(0);
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => void onSignal(sig));
}
