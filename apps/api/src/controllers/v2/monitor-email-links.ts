import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { confirmRecipient, peekRecipientLink, unsubscribeRecipient, type Db, type LinkOutcome } from '@wds/db';
import { WdsError } from '@wds/errors';
import { RECIPIENT_LINK_ROUTES, verifyRecipientToken, type RecipientLinkPurpose } from '@wds/storage';

/**
 * /v2/monitor/email/confirm and /unsubscribe: the links of monitor emails (recipient-mail.ts in
 * activities). No bearer token: the signed token is the credential, and it names one recipient
 * row only, so the answer says nothing of the team, its monitors or other addresses (the address
 * itself is masked, in case a link is forwarded).
 *
 * A GET never changes anything: mail security scanners and link previews open every link of a
 * message by themselves, and an opt-in a scanner can complete (or an unsubscribe it can trigger)
 * proves nothing. The GET answers what the link would do — a browser (Accept: text/html) gets a
 * page with a button — and a POST of the same URL does it: the page's button, a JSON client, or a
 * mail client's one-click unsubscribe (RFC 8058: `List-Unsubscribe-Post`, body
 * `List-Unsubscribe=One-Click`). Errors in the error body's shape (or a page with the same status).
 * The request log names the route, never the URL, so tokens stay out of logs.
 */
export interface EmailLinkConfig {
  db: Db;
  /** The link-signing secret (the file-link secret, which workers sign with). */
  secret: () => string;
}

/** A plugin of its own: the form body a link's button or a one-click unsubscribe posts is accepted here only. */
export function monitorEmailLinkRoutes(cfg: EmailLinkConfig) {
  return async (scope: FastifyInstance) => {
    // The body says nothing the URL does not (RFC 8058's is a fixed `List-Unsubscribe=One-Click`): read, never parsed.
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    for (const purpose of ['confirm', 'unsubscribe'] as const) {
      scope.get(RECIPIENT_LINK_ROUTES[purpose], linkController(cfg, purpose, 'show'));
      scope.post(RECIPIENT_LINK_ROUTES[purpose], linkController(cfg, purpose, 'act'));
    }
  };
}

const DONE: Record<RecipientLinkPurpose, { status: 'confirmed' | 'unsubscribed'; title: string; text: (already: boolean) => string }> = {
  confirm: {
    status: 'confirmed',
    title: 'Email address confirmed',
    text: (already) => `${already ? 'This address was already confirmed.' : 'Thank you: this address is confirmed.'} It will receive change emails from this team's monitors; each one has a link to unsubscribe.`,
  },
  unsubscribe: {
    status: 'unsubscribed',
    title: 'Unsubscribed',
    text: (already) => `${already ? 'This address had already unsubscribed.' : 'This address is unsubscribed.'} It will receive no more monitor emails from this team unless it confirms a new invitation.`,
  },
};

/** What a GET shows before the change: the question and its button. */
const ASK: Record<RecipientLinkPurpose, { title: string; text: string; button: string }> = {
  confirm: { title: 'Confirm monitor emails', text: "should this address receive change emails from this team's monitors?", button: 'Confirm' },
  unsubscribe: { title: 'Unsubscribe from monitor emails', text: "stop all change emails from this team's monitors to this address?", button: 'Unsubscribe' },
};

function linkController(cfg: EmailLinkConfig, purpose: RecipientLinkPurpose, mode: 'show' | 'act') {
  return async (req: FastifyRequest<{ Querystring: Record<string, unknown> }>, reply: FastifyReply) => {
    const html = wantsHtml(req);
    const v = verifyRecipientToken(cfg.secret(), purpose, req.query.token);
    let outcome: LinkOutcome | null = null;
    if (v.ok) {
      if (mode === 'show') outcome = await peekRecipientLink(cfg.db, purpose, v.id, v.nonce);
      else outcome = purpose === 'confirm' ? await confirmRecipient(cfg.db, v.id, v.nonce) : await unsubscribeRecipient(cfg.db, v.id);
    }
    const err = !v.ok ? linkError(v.reason) : outcome!.kind === 'done' ? null : linkError(outcome!.kind);
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    if (err) {
      reply.status(err.status);
      return html ? sendPage(reply, 'This link cannot be used', err.message) : reply.send(err.toBody());
    }
    const done = outcome as Extract<LinkOutcome, { kind: 'done' }>;
    const email = maskEmail(done.email);
    const d = DONE[purpose];
    if (mode === 'show' && !done.already) {
      const ask = ASK[purpose];
      if (html) return sendPage(reply, ask.title, `${email}: ${ask.text}`, ask.button);
      return reply.send({ success: true, data: { action: purpose, email, alreadyDone: false, message: `Nothing changed yet: POST this URL to ${purpose === 'confirm' ? 'confirm' : 'unsubscribe'}.` } });
    }
    if (html) return sendPage(reply, d.title, `${email}: ${d.text(done.already)}`);
    return reply.send({ success: true, data: { status: d.status, email, alreadyDone: done.already } });
  };
}

function linkError(reason: 'invalid' | 'expired' | 'superseded' | 'not_found'): WdsError {
  switch (reason) {
    case 'invalid':
      return new WdsError('BAD_REQUEST', { code: 'INVALID_LINK', message: 'Bad Request: this link is not valid (incomplete or altered). Open the link exactly as the email gave it.' });
    case 'expired':
      return new WdsError('GONE', { code: 'LINK_EXPIRED', message: 'Gone: this confirmation link has expired. Ask the monitor\'s owner to send a new confirmation email.' });
    case 'superseded':
      return new WdsError('GONE', { code: 'LINK_SUPERSEDED', message: 'Gone: this confirmation link is no longer valid (the address unsubscribed, or a newer confirmation email replaced it).' });
    case 'not_found':
      return new WdsError('NOT_FOUND', { code: 'RECIPIENT_NOT_FOUND', message: 'Not Found: this recipient no longer exists.' });
  }
}

/** A browser asks for HTML first; API clients send application/json or * / *. */
function wantsHtml(req: FastifyRequest): boolean {
  const accept = String(req.headers.accept ?? '');
  const html = accept.indexOf('text/html');
  const json = accept.indexOf('application/json');
  return html >= 0 && (json < 0 || html < json);
}

/** a***@example.com: enough for its owner to recognise, little for anyone a link was forwarded to. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** `button`: a form posting to this same URL (an action-less form keeps the query, and so the token). */
function sendPage(reply: FastifyReply, title: string, text: string, button?: string) {
  const form = button ? `<form method="post"><button type="submit">${escape(button)}</button></form>` : '';
  return reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title>` +
      '<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}</style></head>' +
      `<body><h1>${escape(title)}</h1><p>${escape(text)}</p>${form}</body></html>`);
}
