import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type WebSocket } from 'ws';
import { documentsAfter, findActiveKey, loadCrawlJob, loadTeamCrawlJob } from '@wds/db';
import type { ApiDeps } from '../deps';
import { statusFields } from '../controllers/v2/jobs';

/**
 * WebSocket `/v2/crawl/{id}` and `/v2/batch/scrape/{id}`, as the JS SDK's Watcher consumes it:
 * a `catchup` with the status and documents so far, then one `document` message per new page
 * and `status` snapshots when counters move, ending with `done` (completed) or a terminal
 * status snapshot (failed/cancelled). The API key comes as the subprotocol (the SDK's way) or
 * as a Bearer header.
 */
const PATH = /^\/v2\/(crawl|batch\/scrape)\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/?(?:\?.*)?$/i;
const POLL_MS = 500;
const BATCH = 200;

function refuse(socket: Duplex, status: number, text: string) {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${JSON.stringify({ success: false, error: text })}`);
}

export function attachJobStreams(app: FastifyInstance, deps: ApiDeps) {
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => protocols.values().next().value ?? false });

  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void (async () => {
      const m = PATH.exec(req.url ?? '');
      if (!m) return refuse(socket, 404, 'Not Found');
      const kind = m[1] === 'crawl' ? 'crawl' : 'batch';
      const protocol = String(req.headers['sec-websocket-protocol'] ?? '').split(',')[0]!.trim();
      const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
      const key = bearer ?? protocol;
      const auth = key ? await findActiveKey(deps.db, key) : null;
      if (!auth) return refuse(socket, 401, 'Unauthorized: Invalid token');
      const job = await loadTeamCrawlJob(deps.db, auth.teamId, m[2]!, kind);
      if (!job) return refuse(socket, 404, 'Not Found');
      wss.handleUpgrade(req, socket, head, (ws) => void stream(ws, job.id).catch(() => ws.close(1011)));
    })().catch(() => refuse(socket, 500, 'Internal Server Error'));
  });

  async function stream(ws: WebSocket, jobId: string) {
    let open = true;
    ws.on('close', () => (open = false));
    ws.on('error', () => (open = false));
    const send = (msg: unknown) => open && ws.send(JSON.stringify(msg));

    const first = await documentsAfter(deps.db, jobId, 0, BATCH);
    let lastSeq = first.at(-1)?.seq ?? 0;
    let job = (await loadCrawlJob(deps.db, jobId))!;
    let fields = await statusFields(deps.db, job);
    send({ type: 'catchup', data: { ...fields, data: first.map((r) => r.document) } });
    let lastCounters = `${fields.status}/${fields.completed}/${fields.total}`;

    while (open) {
      const rows = await documentsAfter(deps.db, jobId, lastSeq, BATCH);
      for (const r of rows) send({ type: 'document', data: r.document });
      if (rows.length) lastSeq = rows.at(-1)!.seq;
      job = (await loadCrawlJob(deps.db, jobId))!;
      if (job.status !== 'scraping' && rows.length < BATCH) {
        // Documents written just before the status flipped are read once more before ending.
        const tail = await documentsAfter(deps.db, jobId, lastSeq, 100_000);
        for (const r of tail) send({ type: 'document', data: r.document });
        fields = await statusFields(deps.db, job);
        if (job.status === 'completed') send({ type: 'done', data: { ...fields, data: [] } });
        else send({ type: 'status', data: { ...fields, data: [] } });
        ws.close(1000);
        return;
      }
      fields = await statusFields(deps.db, job);
      const counters = `${fields.status}/${fields.completed}/${fields.total}`;
      if (counters !== lastCounters) send({ type: 'status', data: { ...fields, data: [] } });
      lastCounters = counters;
      if (rows.length < BATCH) await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  return {
    /** 1001 Going Away: the SDK's watcher then polls the status route, which another API answers. */
    close: () =>
      new Promise<void>((r) => {
        for (const ws of wss.clients) ws.close(1001, 'server shutting down');
        // A client that does not answer the close frame is not waited for (ws would wait 30 s).
        const cut = setTimeout(() => wss.clients.forEach((ws) => ws.terminate()), 1_000);
        wss.close(() => {
          clearTimeout(cut);
          r();
        });
      }),
  };
}
