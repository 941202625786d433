import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A site whose pages a test edits: `set(path, html)`, `remove(path)` (404), `delay(path, ms)`,
 * `hold(path)` (requests wait, however long, until `release(path)`: a job stays running exactly as
 * long as a test needs it to).
 * Pages under /etag/ answer conditional requests (ETag, 304); others always send the body.
 * Counts requests and 304s per path.
 */
export interface MonitorSite {
  url(path: string): string;
  set(path: string, body: string): void;
  remove(path: string): void;
  delay(path: string, ms: number): void;
  hold(path: string): void;
  release(path: string): void;
  hits: Map<string, number>;
  notModified: Map<string, number>;
  close(): Promise<void>;
}

export const page = (title: string, text: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>`;

export async function startMonitorSite(): Promise<MonitorSite> {
  const pages = new Map<string, string>();
  const delays = new Map<string, number>();
  const held = new Map<string, (() => void)[]>();
  const hits = new Map<string, number>();
  const notModified = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const send = () => {
      const body = pages.get(path);
      if (body === undefined) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body><h1>Not found</h1></body></html>');
      const etag = `"${createHash('sha1').update(body).digest('hex')}"`;
      if (path.startsWith('/etag/')) {
        if (req.headers['if-none-match'] === etag) {
          notModified.set(path, (notModified.get(path) ?? 0) + 1);
          return void res.writeHead(304, { etag }).end();
        }
        return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag }).end(body);
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    };
    const ms = delays.get(path) ?? 0;
    const waiting = held.get(path);
    if (waiting) waiting.push(send);
    else if (ms > 0) setTimeout(send, ms);
    else send();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (p) => `${base}${p}`,
    set: (p, b) => void pages.set(p, b),
    remove: (p) => void pages.delete(p),
    delay: (p, ms) => void delays.set(p, ms),
    hold: (p) => void held.set(p, held.get(p) ?? []),
    release: (p) => {
      const waiting = held.get(p) ?? [];
      held.delete(p);
      for (const send of waiting) send();
    },
    hits,
    notModified,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
