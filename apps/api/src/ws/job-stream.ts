import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type WebSocket } from 'ws';
import { documentSeqsAfter, documentsBySeq, findActiveKey, loadCrawlJob, loadTeamCrawlJob, type Db } from '@wds/db';
import type { ApiDeps } from '../deps';
import { statusFields } from '../controllers/v2/jobs';

/**
 * WebSocket `/v2/crawl/{id}` and `/v2/batch/scrape/{id}`, as the JS SDK's Watcher consumes it:
 * a `catchup` with the status and documents so far, then one `document` message per new page
 * and `status` snapshots when counters move, ending with `done` (completed) or a terminal
 * status snapshot (failed/cancelled). The API key comes as the subprotocol (the SDK's way) or
 * as a Bearer header. The same under /v1 for the v1 clients, whose watcher (JS SDK v1
 * CrawlWatcher) follows batch scrapes on /v1/crawl/{id} as well.
 */
const PATH = /^\/(v1|v2)\/(crawl|batch\/scrape)\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/?(?:\?.*)?$/i;
const POLL_MS = 500;
const BATCH = 200;

/** A gap in the sequence older than this is final (an insert that conflicted or rolled back). */
const SETTLE_MS = 10_000;
/** Sequence numbers re-read per poll: covers SETTLE_MS of documents at thousands of pages a second. */
const SEQ_WINDOW = 50_000;

/**
 * Which of a job's documents a stream has sent. A document's sequence number is taken when its
 * statement runs but becomes visible at commit, so a lower number can appear after a higher one
 * was sent: the cursor re-reads the recent sequence numbers (not the bodies) and sends whatever
 * it has not sent yet. Below `low` everything was sent and has settled.
 */
export class DocumentCursor {
  private low = 0;
  private sent = new Set<number>();

  constructor(
    private readonly db: Db,
    private readonly jobId: string,
  ) {}

  /** Up to `limit` documents not sent yet, in sequence order (empty when caught up). */
  async next(limit: number): Promise<unknown[]> {
    const seqs = await documentSeqsAfter(this.db, this.jobId, this.low, SEQ_WINDOW);
    const fresh = seqs.filter((s) => !this.sent.has(s.seq)).slice(0, limit);
    const rows = await documentsBySeq(this.db, this.jobId, fresh.map((s) => s.seq));
    for (const r of rows) this.sent.add(r.seq);
    for (const s of seqs) {
      if (s.ageMs < SETTLE_MS || !this.sent.has(s.seq)) break;
      this.sent.delete(s.seq);
      this.low = s.seq;
    }
    return rows.map((r) => r.document);
  }
}

/**
 * The protocol is server → client: the SDKs' watchers send nothing. ws buffers a client message
 * up to `maxPayload` (100 MiB by default) before anything sees it, so the bound is set to a few
 * KiB: a larger frame closes the socket with 1009 (Message Too Big) as soon as its header is read,
 * and any data message within the bound with 1008 (Policy Violation). Control frames (ping, pong,
 * close) are unaffected.
 */
export const MAX_CLIENT_MESSAGE_BYTES = 4 * 1024;

const REASONS = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests', 500: 'Internal Server Error' } as const;

function refuse(socket: Duplex, status: keyof typeof REASONS, body: { error: string; details?: unknown }) {
  const json = JSON.stringify({ success: false, ...body });
  socket.end(`HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`);
}

/** The same scope the job's HTTP routes require (see controllers/v2/jobs.ts). */
const SCOPE = { crawl: 'crawl', batch: 'scrape' } as const;

export interface JobStreamConfig {
  /** Watchers open at once per API key in this process; 0 = no limit (WDS_WS_CONNECTIONS_PER_KEY). */
  connectionsPerKey: number;
  /** The stream holds back while more than this is unsent to a watcher (WDS_WS_MAX_BUFFERED_BYTES)... */
  maxBufferedBytes: number;
  /** ...and disconnects a watcher that leaves it so for this long (WDS_WS_STALL_MS). */
  stallMs: number;
  /** Test suites: each message is checked against the OpenAPI document (response-check.ts). */
  onMessage?: (message: unknown) => void;
}

export function attachJobStreams(app: FastifyInstance, deps: ApiDeps, cfg: JobStreamConfig) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE_BYTES, handleProtocols: (protocols) => protocols.values().next().value ?? false });
  const openPerKey = new Map<string, number>();

  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void (async () => {
      const m = PATH.exec(req.url ?? '');
      if (!m) return refuse(socket, 404, { error: 'Not Found' });
      const [, version, route, id] = m as unknown as [string, string, string, string];
      const kind = route === 'crawl' ? 'crawl' : 'batch';
      const protocol = String(req.headers['sec-websocket-protocol'] ?? '').split(',')[0]!.trim();
      const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
      const key = bearer ?? protocol;
      const auth = key ? await findActiveKey(deps.db, key) : null;
      if (!auth) return refuse(socket, 401, { error: 'Unauthorized: Invalid token' });
      if (auth.scopes && !auth.scopes.includes(SCOPE[kind])) {
        return refuse(socket, 403, { error: 'Forbidden', details: { reason: `This API key is not allowed to use '${SCOPE[kind]}'` } });
      }
      let job = await loadTeamCrawlJob(deps.db, auth.teamId, id, kind);
      // The JS SDK v1's watcher follows batch scrapes on /v1/crawl/{id} too (as its status polling does).
      if (!job && version === 'v1' && kind === 'crawl' && (!auth.scopes || auth.scopes.includes(SCOPE.batch))) job = await loadTeamCrawlJob(deps.db, auth.teamId, id, 'batch');
      if (!job) return refuse(socket, 404, { error: 'Not Found' });
      const open = openPerKey.get(auth.keyId) ?? 0;
      if (cfg.connectionsPerKey && open >= cfg.connectionsPerKey) {
        return refuse(socket, 429, { error: `Too Many Requests: at most ${cfg.connectionsPerKey} WebSocket connections per API key; close one or poll the status route` });
      }
      // Counted from here (not from the upgrade's end), so concurrent upgrades cannot overshoot.
      openPerKey.set(auth.keyId, open + 1);
      const release = () => {
        const n = (openPerKey.get(auth.keyId) ?? 1) - 1;
        if (n > 0) openPerKey.set(auth.keyId, n);
        else openPerKey.delete(auth.keyId);
      };
      socket.once('close', release);
      wss.handleUpgrade(req, socket, head, (ws) => void stream(ws, job.id).catch(() => ws.close(1011)));
    })().catch(() => refuse(socket, 500, { error: 'Internal Server Error' }));
  });

  async function stream(ws: WebSocket, jobId: string) {
    let open = true;
    ws.on('close', () => (open = false));
    ws.on('error', () => (open = false));
    ws.on('message', () => {
      open = false;
      ws.close(1008, 'this stream accepts no messages');
    });
    /**
     * Backpressure: messages queue in this process while the watcher does not read, so above the
     * bound the stream waits for it; a watcher that reads nothing for `stallMs` is cut off (its
     * job is unaffected: it runs in the workers, and the SDK's watcher can fall back to polling).
     */
    const send = async (msg: unknown) => {
      cfg.onMessage?.(msg);
      if (!open) return;
      ws.send(JSON.stringify(msg));
      if (ws.bufferedAmount <= cfg.maxBufferedBytes) return;
      const deadline = Date.now() + cfg.stallMs;
      while (open && ws.bufferedAmount > cfg.maxBufferedBytes) {
        if (Date.now() >= deadline) {
          app.log.warn({ jobId, unreadBytes: ws.bufferedAmount, stallMs: cfg.stallMs }, 'WebSocket watcher disconnected: it stopped reading');
          open = false;
          ws.terminate();
          return;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    };

    const cursor = new DocumentCursor(deps.db, jobId);
    const first = await cursor.next(BATCH);
    let job = (await loadCrawlJob(deps.db, jobId))!;
    let fields = await statusFields(deps.db, job);
    await send({ type: 'catchup', data: { ...fields, data: first } });
    let lastCounters = `${fields.status}/${fields.completed}/${fields.total}`;

    while (open) {
      const docs = await cursor.next(BATCH);
      for (const d of docs) await send({ type: 'document', data: d });
      if (!open) return;
      job = (await loadCrawlJob(deps.db, jobId))!;
      if (job.status !== 'scraping' && docs.length < BATCH) {
        // Documents written just before the status flipped are read once more before ending.
        for (let tail = await cursor.next(BATCH); tail.length; tail = await cursor.next(BATCH)) {
          for (const d of tail) await send({ type: 'document', data: d });
          if (!open) return;
        }
        fields = await statusFields(deps.db, job);
        if (job.status === 'completed') await send({ type: 'done', data: { ...fields, data: [] } });
        else await send({ type: 'status', data: { ...fields, data: [] } });
        ws.close(1000);
        return;
      }
      fields = await statusFields(deps.db, job);
      const counters = `${fields.status}/${fields.completed}/${fields.total}`;
      if (counters !== lastCounters) await send({ type: 'status', data: { ...fields, data: [] } });
      lastCounters = counters;
      if (docs.length < BATCH) await new Promise((r) => setTimeout(r, POLL_MS));
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
