import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ipLiteral, isForbiddenAddress, systemResolver, type Resolver } from '@wds/fetch';

/**
 * An HTTP proxy on 127.0.0.1 that applies the SSRF guard to every connection it makes, for a
 * program we cannot put our own fetcher into: yt-dlp (`--proxy`). Whatever the program asks for
 * — the page, an API its extractor calls, a redirect target — reaches the network only through
 * here: HTTPS as `CONNECT host:port`, plain HTTP as absolute-form requests. The proxy resolves
 * the host itself, refuses when any address is private, loopback, link-local, metadata or
 * reserved (unless private networks are allowed), and connects to the address it checked, so
 * DNS cannot answer differently for the real connection. Redirects are the program's next
 * request, so each hop is checked again.
 */
export interface GuardedProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Hosts refused so far (for the caller's error message and tests). */
  refused: string[];
  close(): Promise<void>;
}

export interface GuardedProxyOptions {
  allowPrivateNetwork: boolean;
  /** DNS for the targets (WDS_HOST_OVERRIDES applies, as for fetches). */
  resolve?: Resolver;
  /** Only these ports may be reached (default: any, as for our own fetches: the guard judges addresses). */
  ports?: number[];
  /** The address policy (default: the fetch guard's); tests narrow it. */
  isForbidden?: (ip: string) => boolean;
}

/** Resolves `host` and returns the address to connect to, or the reason it is refused. */
async function vet(host: string, o: GuardedProxyOptions): Promise<{ ip: string } | { refused: string }> {
  const literal = ipLiteral(host);
  const addresses = literal ? [literal] : (await (o.resolve ?? systemResolver)(host, { family: 0, hints: 0 })).map((a) => a.address);
  if (!addresses.length) return { refused: `${host} does not resolve` };
  if (!o.allowPrivateNetwork) {
    const bad = addresses.find((a) => (o.isForbidden ?? isForbiddenAddress)(a));
    if (bad) return { refused: `${host} resolves to a private, loopback or reserved address (${bad})` };
  }
  return { ip: addresses[0]! };
}

function splitHostPort(authority: string): { host: string; port: number } | null {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
  if (!m) return null;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

export async function startGuardedProxy(o: GuardedProxyOptions): Promise<GuardedProxy> {
  const portAllowed = (port: number) => port > 0 && port < 65536 && (!o.ports || o.ports.includes(port));
  const refused: string[] = [];
  const sockets = new Set<Socket>();

  const deny = (what: string, reason: string) => {
    refused.push(what);
    return reason;
  };

  const server: Server = createServer((req, res) => {
    // Absolute-form HTTP through the proxy: GET http://host/path.
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute URL required');
      return;
    }
    const port = Number(target.port || 80);
    if (target.protocol !== 'http:' || !portAllowed(port)) {
      res.writeHead(403).end(deny(target.host, `port or scheme not allowed: ${target.protocol}//${target.host}`));
      return;
    }
    void vet(target.hostname, o).then(
      (v) => {
        if ('refused' in v) {
          res.writeHead(403, { 'content-type': 'text/plain' }).end(deny(target.hostname, v.refused));
          return;
        }
        const up = httpRequest(
          { host: v.ip, port, method: req.method, path: `${target.pathname}${target.search}`, headers: { ...withoutHopHeaders(req), host: target.host } },
          (upRes) => {
            res.writeHead(upRes.statusCode ?? 502, upRes.headers);
            upRes.pipe(res);
          },
        );
        up.on('error', () => res.headersSent ? res.destroy() : res.writeHead(502).end('upstream failed'));
        req.pipe(up);
      },
      () => res.writeHead(502).end('lookup failed'),
    );
  });

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const hp = splitHostPort(req.url ?? '');
    if (!hp || !portAllowed(hp.port)) {
      deny(req.url ?? '', 'port not allowed');
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    void vet(hp.host, o).then(
      (v) => {
        if ('refused' in v) {
          deny(hp.host, v.refused);
          client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
          return;
        }
        const up = connect({ host: v.ip, port: hp.port }, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length) up.write(head);
          up.pipe(client);
          client.pipe(up);
        });
        sockets.add(up);
        up.on('close', () => sockets.delete(up));
        up.on('error', () => client.destroy());
      },
      () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'),
    );
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refused,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Hop-by-hop headers are the proxy's, not the target's. */
function withoutHopHeaders(req: IncomingMessage): Record<string, string | string[] | undefined> {
  const h = { ...req.headers };
  for (const k of ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade']) delete h[k];
  return h;
}
