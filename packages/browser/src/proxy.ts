/**
 * The request policy of a render (SSRF guard and ad blocking): an HTTP forward proxy inside this
 * process that the render's context is configured to use (Playwright's per-context `proxy`,
 * loopback not bypassed). One proxy per policy combination, shared by all renders with it.
 *
 * Why a proxy and not a route handler: Playwright does not hand redirect hops to route handlers
 * (it continues them itself), and Chromium resolves hosts on its own, so a route check can be
 * bypassed by a 302 or by DNS rebinding. Through a proxy, Chromium resolves nothing: every
 * connection — navigations, each redirect hop, subresources, fetch/XHR, workers, out-of-process
 * iframes, WebSockets (CONNECT) — is opened here, to an address that was checked here. The
 * proxy connects to the address it checked (no second lookup), so DNS rebinding cannot swap it.
 *
 * Ad blocking by host fits the same place: a refused CONNECT costs nothing, whereas a Playwright
 * route costs an IPC round trip per request (and HTTP/2 puts many requests on one tunnel here).
 *
 * Refusals: plain-HTTP requests get an empty `403` with `x-wds-blocked: <reason>`; CONNECT
 * tunnels get `403` (Chromium reports ERR_TUNNEL_CONNECTION_FAILED). Each refusal is remembered
 * by host for a minute so a render can tell why a request or its main frame failed (`lastBlock`).
 */
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { ipLiteral } from '@wds/fetch';
import { isAdHost } from './blocklist';
import type { Resolve } from './network';

export interface ProxyPolicy {
  /** Refuse hosts with any forbidden address (allowPrivateNetwork: false). */
  ssrf: boolean;
  /** Refuse hosts on the ad/tracker list. */
  blockAds: boolean;
  /**
   * Refuse everything: the network of a context that must have none (interact's code sandbox).
   * `offline` emulation and routes only see what goes through Chromium's request pipeline;
   * WebRTC's TURN over TCP/TLS does not, but it does follow the context's proxy.
   */
  offline?: boolean;
}

/**
 * A context's `proxy` option for a PolicyProxy: every host through it, loopback included
 * (Chromium bypasses loopback by default; `<-loopback>` removes that implicit rule).
 */
export function contextProxy(server: string): { server: string; bypass: string } {
  return { server, bypass: '<-loopback>' };
}

export interface Block {
  /** ssrf/dns/ads/offline: refused by policy; connect: allowed, but the upstream connection failed. */
  reason: 'ssrf' | 'dns' | 'ads' | 'offline' | 'connect';
  host: string;
  ip?: string;
  at: number;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) and proxy-only headers: never forwarded. */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer',
  'transfer-encoding', 'upgrade',
]);
const BLOCK_MEMORY_MS = 60_000;
const IDLE_SOCKET_MS = 120_000;

export class PolicyProxy {
  private readonly server: http.Server;
  private readonly agent = new http.Agent({ keepAlive: true, maxFreeSockets: 64, timeout: IDLE_SOCKET_MS });
  private readonly blocks = new Map<string, Block>();
  private readonly sockets = new Set<Duplex>();
  private port = 0;
  private starting?: Promise<string>;

  constructor(
    readonly policy: ProxyPolicy,
    private readonly resolve: Resolve,
    private readonly isForbidden: (ip: string) => boolean,
  ) {
    this.server = http.createServer((req, res) => void this.forward(req, res));
    this.server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void this.tunnel(req, socket, head));
    this.server.on('upgrade', (_req, socket: Duplex) => socket.destroy());
    this.server.on('clientError', (_e, socket: Duplex) => socket.destroy());
    this.server.on('connection', (s: net.Socket) => {
      this.sockets.add(s);
      s.setTimeout(IDLE_SOCKET_MS, () => s.destroy());
      s.on('close', () => this.sockets.delete(s));
    });
    this.server.keepAliveTimeout = IDLE_SOCKET_MS;
  }

  /** Starts listening (once) on an ephemeral loopback port; the proxy URL for Chromium. */
  start(): Promise<string> {
    this.starting ??= new Promise<string>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.port = (this.server.address() as net.AddressInfo).port;
        resolve(`http://127.0.0.1:${this.port}`);
      });
    });
    return this.starting;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.agent.destroy();
    if (this.port) await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** The refusal recorded for a host in the last minute, if any. */
  lastBlock(host: string): Block | undefined {
    const b = this.blocks.get(host.toLowerCase());
    return b && performance.now() - b.at < BLOCK_MEMORY_MS ? b : undefined;
  }

  /** Vets a host: the address to connect to, or the refusal. */
  private async vet(hostname: string): Promise<{ ip: string } | { block: Block }> {
    const host = hostname.toLowerCase();
    if (this.policy.offline) return { block: this.remember({ reason: 'offline', host, at: performance.now() }) };
    if (this.policy.blockAds && isAdHost(host)) return { block: this.remember({ reason: 'ads', host, at: performance.now() }) };
    const literal = ipLiteral(host);
    let addrs: string[];
    if (literal !== null) addrs = [literal];
    else {
      try {
        addrs = await this.resolve(host);
      } catch {
        addrs = [];
      }
    }
    let block: Block | undefined;
    if (addrs.length === 0) block = { reason: 'dns', host, at: performance.now() };
    else {
      const bad = this.policy.ssrf ? addrs.find((a) => this.isForbidden(a)) : undefined;
      if (bad !== undefined) block = { reason: 'ssrf', host, ip: bad, at: performance.now() };
    }
    if (block) return { block: this.remember(block) };
    return { ip: addrs[0]! };
  }

  private remember(block: Block): Block {
    this.blocks.delete(block.host);
    this.blocks.set(block.host, block);
    if (this.blocks.size > 1000) this.blocks.delete(this.blocks.keys().next().value!);
    return block;
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error('not an absolute http URL');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('proxy: absolute http URL required');
      return;
    }
    const v = await this.vet(url.hostname);
    if ('block' in v) {
      res.writeHead(403, { 'content-length': '0', 'x-content-type-options': 'nosniff', 'x-wds-blocked': v.block.reason }).end();
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, val] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && val !== undefined) headers[k] = val;
    const upstream = http.request({
      host: v.ip,
      port: Number(url.port || 80),
      method: req.method,
      path: url.pathname + url.search,
      headers,
      setHost: false,
      agent: this.agent,
    });
    upstream.on('response', (up) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, val] of Object.entries(up.headers)) if (!HOP_BY_HOP.has(k) && val !== undefined) out[k] = val;
      res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
      up.pipe(res);
      up.on('error', () => res.destroy());
    });
    upstream.on('error', () => {
      if (!res.headersSent) {
        this.remember({ reason: 'connect', host: url.hostname.toLowerCase(), at: performance.now() });
        res.writeHead(502, { 'content-length': '0', 'x-wds-blocked': 'connect' }).end();
      } else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  private async tunnel(req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => {});
    const target = req.url ?? '';
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(target);
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const host = m[1]!.startsWith('[') ? m[1]!.slice(1, -1) : m[1]!;
    const v = await this.vet(host);
    if ('block' in v) {
      client.end(`HTTP/1.1 403 Forbidden\r\nx-wds-blocked: ${v.block.reason}\r\n\r\n`);
      return;
    }
    const upstream = net.connect({ host: v.ip, port: Number(m[2]) });
    let connected = false;
    upstream.on('connect', () => {
      connected = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => {
      if (!connected) {
        this.remember({ reason: 'connect', host: host.toLowerCase(), at: performance.now() });
        client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      } else client.destroy();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}
