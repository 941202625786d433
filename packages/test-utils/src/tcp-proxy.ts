import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real service (Temporal, Postgres) that a test can break on purpose:
 * `cut` closes every connection and refuses new ones (the service is down), `stall` keeps the
 * connections open but stops carrying bytes (the service hangs), `heal` forwards again.
 */
export interface TcpProxy {
  /** host:port to give the process under test. */
  address: string;
  cut(): void;
  stall(): void;
  heal(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  let mode: 'forward' | 'cut' | 'stall' = 'forward';
  const pairs = new Set<[Socket, Socket]>();

  const server = createServer((client) => {
    if (mode === 'cut') return client.destroy();
    const upstream = connect(port, host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    // Only forwarding mode moves bytes; a stalled pair puts back what it read and stops reading.
    const carry = (from: Socket, to: Socket) => (d: Buffer) => {
      if (mode === 'forward') return void to.write(d);
      from.pause();
      from.unshift(d);
    };
    client.on('data', carry(client, upstream));
    upstream.on('data', carry(upstream, client));
    if (mode === 'stall') {
      client.pause();
      upstream.pause();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as { port: number };
  return {
    address: `127.0.0.1:${addr.port}`,
    cut() {
      mode = 'cut';
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
    },
    stall() {
      mode = 'stall';
      for (const [a, b] of pairs) {
        a.pause();
        b.pause();
      }
    },
    heal() {
      mode = 'forward';
      for (const [a, b] of pairs) {
        a.resume();
        b.resume();
      }
    },
    close: () =>
      new Promise<void>((r) => {
        for (const [a, b] of pairs) {
          a.destroy();
          b.destroy();
        }
        server.close(() => r());
      }),
  };
}
