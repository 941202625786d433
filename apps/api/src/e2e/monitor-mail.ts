import { until, type FakeMail, type FakeSmtp } from '@wds/test-utils';

/**
 * Reading monitor emails in e2e tests: the confirmation email of an address, the links in a
 * message, and following a link (whose base is WDS_PUBLIC_URL) against the test's API.
 */
export const PUBLIC_URL = 'https://wds.example';

/** A stack's settings for monitor mail through `smtp`, its links signed with `secret` and based at PUBLIC_URL. */
export const mailStackEnv = (smtp: FakeSmtp, secret: string): Record<string, string> => ({
  WDS_SMTP_URL: smtp.url,
  WDS_SMTP_FROM: 'WDS monitors <monitors@wds.test>',
  WDS_PUBLIC_URL: PUBLIC_URL,
  WDS_FILE_SIGNING_SECRET: secret,
});

/** Messages to `address` (compared case-insensitively) whose subject matches `what`. */
export function mailsTo(smtp: FakeSmtp, address: string, what?: RegExp): FakeMail[] {
  return smtp.messages.filter((m) => m.to.some((t) => t.toLowerCase() === address.toLowerCase()) && (!what || what.test(m.subject)));
}

/** Waits until `address` has received `n` messages matching `what`, and returns them. */
export function waitForMails(smtp: FakeSmtp, address: string, what: RegExp, n = 1, timeoutMs = 30_000): Promise<FakeMail[]> {
  return until(() => {
    const got = mailsTo(smtp, address, what);
    return got.length >= n ? got : null;
  }, `${n} message(s) to ${address} matching ${what}`, { timeoutMs, everyMs: 150 });
}

/** The link of a purpose in a message (`confirm` or `unsubscribe`). */
export function linkIn(mail: FakeMail, purpose: 'confirm' | 'unsubscribe'): string {
  const m = new RegExp(`${PUBLIC_URL.replace(/\./g, '\\.')}/v2/monitor/email/${purpose}\\?token=[^\\s>]+`).exec(mail.text);
  if (!m) throw new Error(`no ${purpose} link in:\n${mail.text}`);
  return m[0];
}

/**
 * Opens a mailed link against the API (the link's base is WDS_PUBLIC_URL): a GET only asks (what a
 * mail scanner does too); `method: 'POST'` is the page's button or a one-click unsubscribe, with
 * the form body such a client sends.
 */
export async function follow(apiUrl: string, link: string, accept = 'application/json', method: 'GET' | 'POST' = 'GET'): Promise<{ status: number; json: any; text: string; contentType: string }> {
  const headers: Record<string, string> = { accept };
  let body: string | undefined;
  if (method === 'POST') {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = link.includes('/unsubscribe?') ? 'List-Unsubscribe=One-Click' : '';
  }
  const res = await fetch(link.replace(PUBLIC_URL, apiUrl), { method, body, headers });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, contentType: res.headers.get('content-type') ?? '' };
}

/** Does what a link is for (its POST). */
export const act = (apiUrl: string, link: string, accept = 'application/json') => follow(apiUrl, link, accept, 'POST');

/** Confirms `address`: waits for its confirmation email and follows the link. */
export async function confirmAddress(smtp: FakeSmtp, apiUrl: string, address: string): Promise<void> {
  const [mail] = await waitForMails(smtp, address, /^Confirm/);
  const r = await act(apiUrl, linkIn(mail!, 'confirm'));
  if (r.status !== 200) throw new Error(`confirming ${address}: ${r.status} ${r.text}`);
}
