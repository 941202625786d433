import type { FastifyInstance } from 'fastify';

/**
 * SIGTERM/SIGINT: stop accepting connections, let in-flight requests finish, then release
 * Temporal and Postgres and exit. A load balancer retries refused connections elsewhere, so
 * nothing a client sent is dropped — except requests still running after `graceMs`, whose
 * connections are cut then so a stuck request cannot hold a rolling deploy (their jobs go on
 * in the workers; a scrape's result stays readable by id).
 */
export function drainOnSignal(app: FastifyInstance, opts: { graceMs: number; release: () => Promise<void> }): void {
  let closing = false;
  const onSignal = async (sig: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    process.stdout.write(`wds-api: ${sig}, draining in-flight requests (up to ${opts.graceMs} ms)\n`);
    // Last resort if releasing a connection hangs: the process must end.
    setTimeout(() => {
      process.stderr.write('wds-api: shutdown did not finish in time; exiting\n');
      process.exit(1);
    }, opts.graceMs + 5_000).unref();
    // server.close() reaps idle keep-alive sockets once; a socket whose request ends later would
    // otherwise hold the server open until its keep-alive timeout (72 s).
    const reaper = setInterval(() => app.server.closeIdleConnections(), 100);
    const cut = setTimeout(() => {
      process.stderr.write(`wds-api: requests still running after ${opts.graceMs} ms; closing their connections\n`);
      app.server.closeAllConnections();
    }, opts.graceMs);
    try {
      await app.close();
    } catch (e) {
      process.stderr.write(`wds-api: close failed: ${(e as Error).message}\n`);
    }
    clearInterval(reaper);
    clearTimeout(cut);
    await opts.release().catch((e: Error) => process.stderr.write(`wds-api: release failed: ${e.message}\n`));
    process.exit(0);
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => void onSignal(sig));
}
