import { createHmac } from 'node:crypto';
import { request } from 'undici';
import { claimDueDeliveries, recordDeliveryAttempt, type Db, type DueDelivery } from '@wds/db';
import { createAgent, isForbiddenAddress } from '@wds/fetch';
import { webhookAttempts, webhookDeliveryLag } from '@wds/metrics';
import { WEBHOOK_SOURCES, type WebhookRequest } from './sources';

/**
 * Delivers webhook deliveries (derived from job events): POSTs each as JSON, signed with
 * `X-Firecrawl-Signature: sha256=<hex HMAC of the raw body>` when a secret is configured,
 * retried with exponential backoff, and given up ("dead") after maxAttempts. Runs beside the
 * control-queue worker; several copies share the table safely (claims use SKIP LOCKED).
 *
 * Isolation: every delivery runs on its own as soon as it is claimed (nothing waits for a batch
 * to finish), each attempt has one deadline covering connect and response, and an origin never
 * has more than `perOrigin` deliveries in flight here. A receiver that never answers therefore
 * holds at most `perOrigin` of `maxInFlight` slots, for `timeoutMs` each time it is retried;
 * every other receiver keeps getting its events at once. Each attempt is recorded
 * (webhook_attempts: status code or error, duration).
 */
export interface DispatcherOptions {
  db: Db;
  secret?: string;
  allowPrivateNetwork: boolean;
  /** How often to look for due deliveries when there is nothing to do. */
  pollMs?: number;
  maxAttempts?: number;
  /** Deadline of one attempt: connecting, sending and the receiver's answer. */
  timeoutMs?: number;
  /** Deliveries in flight at once to one origin (scheme://host:port). */
  perOrigin?: number;
  /** Deliveries in flight at once in this process. */
  maxInFlight?: number;
}

export function signWebhookBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export const backoffMs = (attempt: number) => Math.min(1_000 * 2 ** (attempt - 1), 5 * 60_000);

export function startWebhookDispatcher(o: DispatcherOptions): { stop(): Promise<void> } {
  const agent = createAgent({ rejectUnauthorized: true, isForbidden: o.allowPrivateNetwork ? null : isForbiddenAddress });
  const pollMs = o.pollMs ?? 250;
  const maxAttempts = o.maxAttempts ?? 8;
  const timeoutMs = o.timeoutMs ?? 5_000;
  const perOrigin = o.perOrigin ?? 4;
  const maxInFlight = o.maxInFlight ?? 64;
  // A claim outlives its attempt (building the body, the request, recording it) by a margin.
  const claimMs = timeoutMs * 2 + 10_000;
  const inFlight = new Map<string, number>();
  const running = new Set<Promise<void>>();
  let stopped = false;
  let wake: (() => void) | null = null;
  // Set by a nudge that came while the loop was not waiting, so that it is not lost.
  let nudged = false;
  const nudge = () => {
    nudged = true;
    wake?.();
    wake = null;
  };

  async function send(d: DueDelivery, req: Exclude<WebhookRequest, { drop: string }>) {
    const headers: Record<string, string> = { ...req.headers, 'content-type': 'application/json', 'user-agent': 'WDS-Webhooks/1.0' };
    if (o.secret) headers['x-firecrawl-signature'] = signWebhookBody(o.secret, req.body);
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(d.url, { method: 'POST', body: req.body, headers, dispatcher: agent, signal, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      await res.body.dump().catch(() => {});
      return { statusCode: res.statusCode, error: res.statusCode >= 200 && res.statusCode < 300 ? null : `receiver answered ${res.statusCode}` };
    } catch (e) {
      return { statusCode: null, error: signal.aborted ? `timed out: no response within ${timeoutMs} ms` : e instanceof Error ? e.message : String(e) };
    }
  }

  async function deliver(d: DueDelivery) {
    const startedAt = new Date();
    let statusCode: number | null = null;
    let error: string | null;
    let retry = true;
    try {
      const source = WEBHOOK_SOURCES[d.jobKind];
      const req: WebhookRequest = source ? await source(o.db, d) : { drop: `no webhook source for ${d.jobKind} jobs` };
      if ('drop' in req) {
        error = req.drop;
        retry = false;
      } else {
        ({ statusCode, error } = await send(d, req));
      }
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    const attempt = { attempt: d.attempt, startedAt, durationMs: Date.now() - startedAt.getTime(), statusCode, error };
    const outcome = error === null ? { delivered: true as const } : { delivered: false as const, retryInMs: retry && d.attempt < maxAttempts ? backoffMs(d.attempt) : null };
    webhookAttempts.inc({ outcome: outcome.delivered ? 'delivered' : outcome.retryInMs === null ? 'given_up' : 'failed' });
    if (outcome.delivered) webhookDeliveryLag.observe(Math.max(0, Date.now() - d.eventAt.getTime()) / 1000);
    // Unrecorded (Postgres away): the claim lapses and the delivery is attempted again.
    await recordDeliveryAttempt(o.db, d.id, attempt, outcome).catch(() => {});
  }

  function start(d: DueDelivery) {
    inFlight.set(d.origin, (inFlight.get(d.origin) ?? 0) + 1);
    const p = deliver(d).finally(() => {
      const left = (inFlight.get(d.origin) ?? 1) - 1;
      if (left > 0) inFlight.set(d.origin, left);
      else inFlight.delete(d.origin);
      running.delete(p);
      // A slot is free, and the job's next event may be due now.
      nudge();
    });
    running.add(p);
  }

  const loop = (async () => {
    while (!stopped) {
      nudged = false;
      const room = maxInFlight - running.size;
      let claimed = 0;
      if (room > 0) {
        try {
          const due = await claimDueDeliveries(o.db, { n: room, claimMs, perOrigin, inFlight });
          for (const d of due) start(d);
          claimed = due.length;
        } catch {
          // Postgres briefly unavailable: try again on the next tick.
        }
      }
      if (stopped) break;
      // More may be due at once when this claim was full; otherwise wait for a tick or a finished delivery.
      if (!nudged && (claimed === 0 || claimed >= room)) await new Promise<void>((r) => ((wake = r), setTimeout(r, pollMs)));
    }
  })();

  return {
    async stop() {
      stopped = true;
      nudge();
      await loop;
      await Promise.allSettled([...running]);
      await agent.close();
    },
  };
}
