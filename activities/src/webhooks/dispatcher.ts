import { createHmac } from 'node:crypto';
import { request } from 'undici';
import { claimDueWebhooks, markWebhookDelivered, markWebhookFailed, type Db } from '@wds/db';
import { createAgent, isForbiddenAddress } from '@wds/fetch';

/**
 * Delivers the webhook outbox: POSTs each event as JSON, signed with
 * `X-Firecrawl-Signature: sha256=<hex HMAC of the raw body>` when a secret is configured,
 * retried with exponential backoff, and given up ("dead") after maxAttempts. Runs beside the
 * control-queue worker; several copies share the outbox safely (claims use SKIP LOCKED).
 */
export interface DispatcherOptions {
  db: Db;
  secret?: string;
  allowPrivateNetwork: boolean;
  pollMs?: number;
  maxAttempts?: number;
  timeoutMs?: number;
}

export function signWebhookBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export const backoffMs = (attempt: number) => Math.min(1_000 * 2 ** (attempt - 1), 5 * 60_000);

export function startWebhookDispatcher(o: DispatcherOptions): { stop(): Promise<void> } {
  const agent = createAgent({ rejectUnauthorized: true, isForbidden: o.allowPrivateNetwork ? null : isForbiddenAddress });
  const pollMs = o.pollMs ?? 250;
  const maxAttempts = o.maxAttempts ?? 8;
  const timeoutMs = o.timeoutMs ?? 10_000;
  let stopped = false;
  let wake: (() => void) | null = null;

  async function deliver(w: Awaited<ReturnType<typeof claimDueWebhooks>>[number]) {
    const body = JSON.stringify(w.payload);
    const headers: Record<string, string> = { ...(w.headers ?? {}), 'content-type': 'application/json', 'user-agent': 'WDS-Webhooks/1.0' };
    if (o.secret) headers['x-firecrawl-signature'] = signWebhookBody(o.secret, body);
    try {
      const res = await request(w.url, { method: 'POST', body, headers, dispatcher: agent, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      await res.body.dump().catch(() => {});
      if (res.statusCode >= 200 && res.statusCode < 300) return markWebhookDelivered(o.db, w.id);
      throw new Error(`receiver answered ${res.statusCode}`);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      await markWebhookFailed(o.db, w.id, msg, w.attempts >= maxAttempts ? null : backoffMs(w.attempts));
    }
  }

  const loop = (async () => {
    while (!stopped) {
      let batch: Awaited<ReturnType<typeof claimDueWebhooks>> = [];
      try {
        batch = await claimDueWebhooks(o.db, 20, timeoutMs * 3);
        await Promise.all(batch.map(deliver));
      } catch {
        // Postgres briefly unavailable: try again on the next tick.
      }
      if (!batch.length) await new Promise<void>((r) => ((wake = r), setTimeout(r, pollMs)));
    }
  })();

  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await agent.close();
    },
  };
}
