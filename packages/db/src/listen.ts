import pg from 'pg';

const RECONNECT_MS = 1_000;

export interface ChannelListener {
  close(): Promise<void>;
}

/**
 * One dedicated connection LISTENing on `channel`, re-established in the background when lost.
 * `onConnected` runs after every (re)connection: what was announced while the connection was down
 * is gone, so callers look for it themselves then (a sweep, a fallback).
 */
export function listenOnChannel(url: string, channel: string, onPayload: (payload: string) => void, onConnected?: () => void): ChannelListener {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    const c = new pg.Client({ connectionString: url });
    c.on('notification', (n) => {
      if (n.payload) onPayload(n.payload);
    });
    const lost = () => {
      if (client === c) client = null;
      c.removeAllListeners('error');
      c.on('error', () => {});
      c.end().catch(() => {});
      if (!closed && !retry) retry = setTimeout(() => ((retry = undefined), void connect()), RECONNECT_MS);
    };
    c.on('error', lost);
    c.on('end', lost);
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
      if (closed) await c.end();
      else {
        client = c;
        onConnected?.();
      }
    } catch {
      lost();
    }
  };
  void connect();

  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
