import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local site for end-to-end tests, served on 127.0.0.1 with a per-path hit counter
 * (how tests prove that a cache hit made no outbound request).
 */
export type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** One request a fixture site served: when it arrived and ended (ms, sub-ms precision), how many were open then, its status. */
export interface ServedRequest {
  path: string;
  at: number;
  /** Requests open at the moment it arrived, itself included. */
  open: number;
  endedAt?: number;
  status?: number;
}

export interface FixtureSite {
  url(path: string): string;
  origin: string;
  hits(path: string): number;
  /** Every request served so far, in arrival order (politeness tests: arrival times, requests open at once). */
  requests(): ServedRequest[];
  /** Request headers of the last request to the path. */
  lastHeaders(path: string): IncomingMessage['headers'] | undefined;
  route(path: string, h: Handler): void;
  close(): Promise<void>;
}

export const html = (body: string, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(body);
};

export async function startFixtureSite(routes: Record<string, Handler> = {}, host = '127.0.0.1'): Promise<FixtureSite> {
  const table = new Map(Object.entries(routes));
  const counts = new Map<string, number>();
  const headers = new Map<string, IncomingMessage['headers']>();
  const served: ServedRequest[] = [];
  let open = 0;
  const now = () => performance.timeOrigin + performance.now();
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const entry: ServedRequest = { path, at: now(), open: ++open };
    served.push(entry);
    res.once('close', () => {
      open--;
      entry.endedAt = now();
      entry.status = res.statusCode;
    });
    counts.set(path, (counts.get(path) ?? 0) + 1);
    headers.set(path, req.headers);
    const h = table.get(path);
    if (!h) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><head><title>Not here</title></head><body><h1>404</h1></body></html>');
      return;
    }
    try {
      await h(req, res);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(e));
    }
  });
  // Slow-page tests leave sockets open; never let them hold the test process.
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host}:${port}`;
  return {
    origin,
    url: (p) => `${origin}${p}`,
    hits: (p) => counts.get(p) ?? 0,
    requests: () => served.slice(),
    lastHeaders: (p) => headers.get(p),
    route: (p, h) => void table.set(p, h),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
