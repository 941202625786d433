import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { signRecipientToken } from '@wds/storage';
import { call, namespaceFor, startFakeSmtp, startStack, until, type FakeSmtp, type Stack, FAST_MONITOR_ENV } from '@wds/test-utils';
import { act, follow, linkIn, mailStackEnv, mailsTo, PUBLIC_URL, waitForMails } from './monitor-mail';
import { page, startMonitorSite, type MonitorSite } from './monitor-site';

// Monitor email recipients' opt-in, end to end: the real stack, a local SMTP server (real
// protocol) and the JS SDK. A recipient first gets one confirmation email with a signed,
// expiring link; change emails only after it followed it, each with an unsubscribe link; the
// state is per team and address and shows on the monitor (`emailRecipientSubscriptions`).
// Also: target scrapeOptions are checked against the team's features as POST /v2/scrape does.
const LINK_SECRET = 'monitor-email-e2e-link-secret';
const RESEND_SECONDS = 8;
let stack: Stack;
let site: MonitorSite;
let smtp: FakeSmtp;
let fc: Firecrawl;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  site = await startMonitorSite();
  smtp = await startFakeSmtp();
  stack = await startStack({
    namespace: namespaceFor(import.meta.url),
    env: {
      ...mailStackEnv(smtp, LINK_SECRET),
      WDS_MONITOR_CONFIRM_RESEND_SECONDS: String(RESEND_SECONDS),
      ...FAST_MONITOR_ENV,
    },
  });
  fc = new Firecrawl({ apiKey: stack.apiKey, apiUrl: stack.url });
});
after(async () => {
  await stack?.stop();
  await site?.close();
  await smtp?.close();
});

async function runAndWait(client: Firecrawl, monitorId: string) {
  const check = await client.runMonitor(monitorId);
  return until(async () => {
    const c = await client.getMonitorCheck(monitorId, check.id);
    return c.status !== 'running' && c.status !== 'queued' ? c : null;
  }, 'the check to end', { timeoutMs: 90_000, everyMs: 200 });
}
const emailStatus = async (monitorId: string, checkId: string) =>
  ((await fc.getMonitorCheck(monitorId, checkId)).notificationStatus as { email?: { status: string; recipients?: string[]; reason?: string } } | null)?.email;
const decided = (monitorId: string, checkId: string) => until(async () => {
  const s = await emailStatus(monitorId, checkId);
  return s && s.status !== 'retrying' ? s : null;
}, 'the summary decided', { timeoutMs: 30_000, everyMs: 200 });
const subscriptions = async (client: Firecrawl, id: string) => (await client.getMonitor(id)).emailRecipientSubscriptions;

describe('recipient opt-in', () => {
  test('pending → confirmation email only; confirmed → change emails with an unsubscribe link; unsubscribed → none; re-adding asks again', { timeout: 240_000 }, async () => {
    site.set('/optin', page('Opt-in', 'first text'));
    const m = await fc.createMonitor({
      name: 'optin-monitor', schedule: { text: 'every 30 minutes' },
      notification: { email: { enabled: true, recipients: ['Alice@Example.com'], includeDiffs: true } },
      targets: [{ type: 'scrape', urls: [site.url('/optin')] }],
    });
    const invitedBy = Date.now(); // the confirmation was asked for before the answer
    assert.equal(m.emailRecipientSubscriptions?.length, 1);
    assert.deepEqual({ ...m.emailRecipientSubscriptions![0], confirmationEmailSent: undefined }, { email: 'Alice@Example.com', status: 'pending', source: 'opt_in', confirmationEmailSent: undefined });

    const [invite] = await waitForMails(smtp, 'alice@example.com', /^Confirm/);
    assert.equal(invite!.subject, 'Confirm change emails from a WDS monitor');
    assert.ok(!`${invite!.subject}\n${invite!.text}`.includes('optin-monitor'), 'no monitor name in mail to an unconfirmed address');
    const confirm = linkIn(invite!, 'confirm');
    assert.ok(!invite!.text.includes(LINK_SECRET));
    await until(async () => (await subscriptions(fc, m.id))?.[0]?.confirmationEmailSent, 'confirmationEmailSent', { everyMs: 200 });

    // Pending: the check's summary is not sent to it.
    const first = await runAndWait(fc, m.id);
    const st = await decided(m.id, first.id);
    assert.equal(st.status, 'suppressed');
    assert.match(st.reason ?? '', /no recipient has confirmed/);
    assert.equal(mailsTo(smtp, 'alice@example.com', /optin-monitor:/).length, 0, 'no change email before confirming');
    assert.equal(mailsTo(smtp, 'alice@example.com', /^Confirm/).length, 1, 'one confirmation email');

    // Opening the link (a browser, or a mail scanner fetching every link) changes nothing: it asks, with a button.
    const asked = await follow(stack.url, confirm, 'text/html,application/xhtml+xml');
    assert.equal(asked.status, 200);
    assert.match(asked.contentType, /text\/html/);
    assert.match(asked.text, /<form method="post"><button type="submit">Confirm<\/button><\/form>/);
    const askedJson = await follow(stack.url, confirm);
    assert.equal(askedJson.status, 200);
    assert.deepEqual({ ...askedJson.json.data, message: undefined }, { action: 'confirm', email: 'a***@example.com', alreadyDone: false, message: undefined });
    assert.equal((await subscriptions(fc, m.id))?.[0]?.status, 'pending', 'a GET confirms nothing');
    // The button posts the same URL: a page for the browser; JSON clients the masked address.
    const page1 = await act(stack.url, confirm, 'text/html,application/xhtml+xml');
    assert.equal(page1.status, 200);
    assert.match(page1.contentType, /text\/html/);
    assert.match(page1.text, /confirmed/);
    assert.ok(!page1.text.includes('<form'), 'nothing left to press');
    const again = await act(stack.url, confirm);
    assert.equal(again.status, 200);
    assert.deepEqual(again.json, { success: true, data: { status: 'confirmed', email: 'a***@example.com', alreadyDone: true } });
    assert.deepEqual((await follow(stack.url, confirm)).json, again.json, 'once done, the GET says so');
    assert.equal((await subscriptions(fc, m.id))?.[0]?.status, 'confirmed');

    site.set('/optin', page('Opt-in', 'second text'));
    const changed = await runAndWait(fc, m.id);
    assert.equal((await decided(m.id, changed.id)).status, 'sent');
    const [mail] = mailsTo(smtp, 'alice@example.com', /optin-monitor: 1 changed/);
    assert.ok(mail, 'the change email reached the confirmed address');
    assert.match(mail.text, /^ {4}\+.*second text/m);
    const unsubscribe = linkIn(mail, 'unsubscribe');
    assert.equal(mail.headers['list-unsubscribe'], `<${unsubscribe}>`);
    assert.equal(mail.headers['list-unsubscribe-post'], 'List-Unsubscribe=One-Click');

    const peeked = await follow(stack.url, unsubscribe);
    assert.equal(peeked.json.data.action, 'unsubscribe');
    assert.equal((await subscriptions(fc, m.id))?.[0]?.status, 'confirmed', 'a GET unsubscribes nothing');
    // A mail client's one-click unsubscribe (RFC 8058): a POST of the link with List-Unsubscribe=One-Click.
    const off = await act(stack.url, unsubscribe);
    assert.equal(off.status, 200, off.text);
    assert.equal(off.json.data.status, 'unsubscribed');
    assert.equal((await subscriptions(fc, m.id))?.[0]?.status, 'unsubscribed');
    for (const open of [follow, act]) {
      const oldConfirm = await open(stack.url, confirm);
      assert.equal(oldConfirm.status, 410, 'an old confirmation link does not resubscribe');
      assert.equal(oldConfirm.json.code, 'LINK_SUPERSEDED');
    }

    site.set('/optin', page('Opt-in', 'third text'));
    const quiet = await runAndWait(fc, m.id);
    assert.equal((await decided(m.id, quiet.id)).status, 'suppressed');
    assert.equal(mailsTo(smtp, 'alice@example.com', /optin-monitor:/).length, 1, 'nothing after unsubscribing');

    // Taken off the monitor and named again: a new confirmation (once the resend window has passed), whose link works.
    await sleep(Math.max(0, invitedBy + RESEND_SECONDS * 1000 + 500 - Date.now()));
    await fc.updateMonitor(m.id, { notification: { email: { enabled: true, recipients: ['ops@example.com'] } } });
    const back = await fc.updateMonitor(m.id, { notification: { email: { enabled: true, recipients: ['ops@example.com', 'alice@example.com'] } } });
    assert.deepEqual(back.emailRecipientSubscriptions?.map((s) => [s.email, s.status]), [['ops@example.com', 'pending'], ['alice@example.com', 'pending']]);
    const invites = await waitForMails(smtp, 'alice@example.com', /^Confirm/, 2);
    const fresh = linkIn(invites[1]!, 'confirm');
    assert.notEqual(fresh, confirm);
    assert.equal((await act(stack.url, fresh)).status, 200);
    assert.equal((await subscriptions(fc, m.id))?.find((s) => s.email === 'alice@example.com')?.status, 'confirmed');
    await fc.deleteMonitor(m.id);
  });

  test('confirmed once per team: another monitor of the team needs no confirmation, another team asks again and sees nothing of the first', { timeout: 120_000 }, async () => {
    const target = [{ type: 'scrape' as const, urls: [site.url('/optin-team')] }];
    const a1 = await fc.createMonitor({ name: 'team-a-1', schedule: { text: 'every 30 minutes' }, notification: { email: { enabled: true, recipients: ['bob@example.com'] } }, targets: target });
    const [invite] = await waitForMails(smtp, 'bob@example.com', /^Confirm/);
    assert.equal((await act(stack.url, linkIn(invite!, 'confirm'))).status, 200);
    const a2 = await fc.createMonitor({ name: 'team-a-2', schedule: { text: 'every 30 minutes' }, notification: { email: { enabled: true, recipients: ['BOB@example.com'] } }, targets: target });
    assert.equal(a2.emailRecipientSubscriptions?.[0]?.status, 'confirmed');

    const other = await stack.newTeam();
    const fcB = new Firecrawl({ apiKey: other.apiKey, apiUrl: stack.url });
    const b = await fcB.createMonitor({ name: 'team-b', schedule: { text: 'every 30 minutes' }, notification: { email: { enabled: true, recipients: ['bob@example.com'] } }, targets: target });
    assert.equal(b.emailRecipientSubscriptions?.[0]?.status, 'pending', "team A's confirmation is not team B's");
    await waitForMails(smtp, 'bob@example.com', /^Confirm/, 2);
    await sleep(1_500);
    assert.equal(mailsTo(smtp, 'bob@example.com', /^Confirm/).length, 2, 'team A asked once, team B once');

    // Team B sees nothing of team A's monitors or their recipients.
    const r = await call({ url: stack.url, apiKey: other.apiKey }, 'GET', `/v2/monitor/${a1.id}`);
    assert.equal(r.status, 404);
    const listed = await call({ url: stack.url, apiKey: other.apiKey }, 'GET', '/v2/monitor');
    assert.deepEqual(listed.json.data.map((x: { id: string }) => x.id), [b.id]);
    assert.ok(!listed.text.includes(a1.id));
    const resend = await call({ url: stack.url, apiKey: other.apiKey }, 'POST', `/v2/monitor/${a1.id}/recipients/resend`, { email: 'bob@example.com' });
    assert.equal(resend.status, 404);
    for (const id of [a1.id, a2.id]) await fc.deleteMonitor(id);
    await fcB.deleteMonitor(b.id);
  });

  test('resending a confirmation is rate-limited per address; not a recipient 404; confirmed 409', { timeout: 90_000 }, async () => {
    const m = await fc.createMonitor({ name: 'resend', schedule: { text: 'every 30 minutes' }, notification: { email: { enabled: true, recipients: ['carol@example.com'] } }, targets: [{ type: 'scrape', urls: [site.url('/optin-resend')] }] });
    // Asked right after the invitation (written before create answered), not after its mail arrived:
    // under load the mail can take longer than the window.
    const soon = await call(stack, 'POST', `/v2/monitor/${m.id}/recipients/resend`, { email: 'carol@example.com' });
    assert.equal(soon.status, 429, soon.text);
    assert.equal(soon.json.code, 'CONFIRMATION_RATE_LIMITED');
    assert.ok(Number(soon.headers.get('retry-after')) >= 1 && Number(soon.headers.get('retry-after')) <= RESEND_SECONDS);
    await waitForMails(smtp, 'carol@example.com', /^Confirm/);
    await sleep(RESEND_SECONDS * 1000 + 300);
    const ok = await call(stack, 'POST', `/v2/monitor/${m.id}/recipients/resend`, { email: 'Carol@Example.com' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.data.status, 'pending');
    assert.equal((await call(stack, 'POST', `/v2/monitor/${m.id}/recipients/resend`, { email: 'carol@example.com' })).status, 429, 'the resend restarted the window');
    const mails = await waitForMails(smtp, 'carol@example.com', /^Confirm/, 2);
    // Both links work (a resend keeps the older one valid); the second use is "already".
    assert.equal((await act(stack.url, linkIn(mails[0]!, 'confirm'))).json.data.alreadyDone, false);
    assert.equal((await act(stack.url, linkIn(mails[1]!, 'confirm'))).json.data.alreadyDone, true);
    const confirmed = await call(stack, 'POST', `/v2/monitor/${m.id}/recipients/resend`, { email: 'carol@example.com' });
    assert.equal(confirmed.status, 409);
    assert.equal(confirmed.json.code, 'RECIPIENT_ALREADY_CONFIRMED');
    assert.equal((await call(stack, 'POST', `/v2/monitor/${m.id}/recipients/resend`, { email: 'nobody@example.com' })).status, 404);
    const bad = await call(stack, 'POST', `/v2/monitor/${m.id}/recipients/resend`, { email: 'not an address' });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json.details[0].path, ['email']);
    await fc.deleteMonitor(m.id);
  });

  test('tampered, expired, unknown and missing tokens: 400 / 410 / 404 with the error body (or a page)', { timeout: 60_000 }, async () => {
    const m = await fc.createMonitor({ name: 'links', schedule: { text: 'every 30 minutes' }, notification: { email: { enabled: true, recipients: ['dave@example.com'] } }, targets: [{ type: 'scrape', urls: [site.url('/optin-links')] }] });
    const [invite] = await waitForMails(smtp, 'dave@example.com', /^Confirm/);
    const link = linkIn(invite!, 'confirm');
    const token = decodeURIComponent(new URL(link).searchParams.get('token')!);
    const [id, nonce, expires, sig] = token.split('.') as [string, string, string, string];
    const at = (t: string, purpose = 'confirm') => `${PUBLIC_URL}/v2/monitor/email/${purpose}?token=${encodeURIComponent(t)}`;

    const tampered = await follow(stack.url, at(`${id}.${nonce}.${expires}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`));
    assert.equal(tampered.status, 400);
    assert.equal(tampered.json.success, false);
    assert.equal(tampered.json.code, 'INVALID_LINK');
    const later = await follow(stack.url, at(`${id}.${nonce}.${Number(expires) + 3600}.${sig}`));
    assert.equal(later.status, 400, 'an edited expiry breaks the signature');
    const asUnsubscribe = await follow(stack.url, at(token, 'unsubscribe'));
    assert.equal(asUnsubscribe.status, 400, 'a confirmation token is not an unsubscribe token');
    const missing = await follow(stack.url, `${PUBLIC_URL}/v2/monitor/email/confirm`);
    assert.equal(missing.status, 400);
    const page400 = await follow(stack.url, at('garbage'), 'text/html');
    assert.equal(page400.status, 400);
    assert.match(page400.contentType, /text\/html/);

    const expired = await follow(stack.url, at(signRecipientToken(LINK_SECRET, 'confirm', { id, nonce: Number(nonce), expires: Math.floor(Date.now() / 1000) - 60 })));
    assert.equal(expired.status, 410);
    assert.equal(expired.json.code, 'LINK_EXPIRED');
    assert.match(expired.json.error, /expired/);
    const unknown = await follow(stack.url, at(signRecipientToken(LINK_SECRET, 'confirm', { id: '00000000-0000-4000-8000-000000000000', nonce: 0, expires: Math.floor(Date.now() / 1000) + 60 })));
    assert.equal(unknown.status, 404);
    const tamperedPost = await act(stack.url, at(`${id}.${nonce}.${expires}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`));
    assert.equal(tamperedPost.status, 400);
    assert.equal((await subscriptions(fc, m.id))?.[0]?.status, 'pending', 'none of these confirmed anything');
    assert.equal((await follow(stack.url, link)).status, 200);
    await fc.deleteMonitor(m.id);
  });
});

describe("targets' scrapeOptions and the team's features", () => {
  test('zero data retention team: screenshot formats and actions are 400 as on /v2/scrape, at create and update', { timeout: 60_000 }, async () => {
    const zdr = await stack.newTeam({ flags: { zeroDataRetention: true } });
    const key = { url: stack.url, apiKey: zdr.apiKey };
    const scrapeOptions = { formats: ['markdown', 'screenshot'] };
    const scrape = await call(key, 'POST', '/v2/scrape', { url: site.url('/zdr'), zeroDataRetention: true, ...scrapeOptions });
    assert.equal(scrape.status, 400);
    const body = { name: 'zdr', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'scrape', urls: [site.url('/zdr')], scrapeOptions }] };
    const created = await call(key, 'POST', '/v2/monitor', body);
    assert.equal(created.status, 400, created.text);
    assert.equal(created.json.code, scrape.json.code);
    assert.equal(created.json.code, 'SCRAPE_ZDR_VIOLATION_ERROR');
    assert.equal(created.json.error, scrape.json.error);
    assert.deepEqual(created.json.details[0].path, ['targets', 0, 'scrapeOptions', 'formats', 1]);
    const fcZ = new Firecrawl({ apiKey: zdr.apiKey, apiUrl: stack.url });
    await assert.rejects(fcZ.createMonitor({ name: 'zdr', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'crawl', url: site.url('/'), scrapeOptions: { actions: [{ type: 'screenshot' }] } }] }), (e: { status?: number }) => e.status === 400);

    const ok = await fcZ.createMonitor({ name: 'zdr-ok', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'scrape', urls: [site.url('/zdr')] }] });
    const updated = await call(key, 'PATCH', `/v2/monitor/${ok.id}`, { targets: body.targets });
    assert.equal(updated.status, 400);
    assert.equal(updated.json.code, 'SCRAPE_ZDR_VIOLATION_ERROR');
    assert.equal((await fcZ.getMonitor(ok.id)).targets.length, 1);
    await fcZ.deleteMonitor(ok.id);
  });

  test("features the team lacks are 403 as on /v2/scrape (zero data retention, threat protection)", { timeout: 60_000 }, async () => {
    for (const [option, code] of [[{ zeroDataRetention: true }, 'ZDR_NOT_ENABLED'], [{ threatProtection: { mode: 'off' } }, 'THREAT_PROTECTION_NOT_ENABLED']] as const) {
      const scrape = await call(stack, 'POST', '/v2/scrape', { url: site.url('/zdr'), ...option });
      const body = { name: 'features', schedule: { text: 'every 30 minutes' }, targets: [{ type: 'scrape', urls: [site.url('/zdr')], scrapeOptions: option }] };
      const created = await call(stack, 'POST', '/v2/monitor', body);
      assert.equal(created.status, 403, created.text);
      assert.equal(created.json.code, code);
      assert.equal(scrape.status, 403, scrape.text);
      assert.equal(created.json.error, scrape.json.error);
    }
  });
});
