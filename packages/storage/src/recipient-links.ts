import { hmacSignature, signatureMatches } from './signing';

/**
 * Links in monitor emails (confirm a recipient, unsubscribe one): a token
 * `<recipient id>.<nonce>.<expires>.<sig>`, sig = base64url(HMAC-SHA256(secret,
 * "monitor-recipient/v1\n<purpose>\n<id>\n<nonce>\n<expires>")), the scheme of ./signing.ts. The secret is the file-link
 * secret (WDS_FILE_SIGNING_SECRET); the prefix keeps a file signature from ever being a token's.
 * The token names only the recipient row: whoever follows it learns nothing of the team.
 * `expires` is Unix seconds, 0 for never (unsubscribe links keep working).
 */
export type RecipientLinkPurpose = 'confirm' | 'unsubscribe';

export interface RecipientToken {
  id: string;
  nonce: number;
  expires: number;
}

export type RecipientTokenVerdict = ({ ok: true } & RecipientToken) | { ok: false; reason: 'invalid' | 'expired' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function signature(secret: string, purpose: RecipientLinkPurpose, t: RecipientToken): string {
  return hmacSignature(secret, `monitor-recipient/v1\n${purpose}\n${t.id}\n${t.nonce}\n${t.expires}`);
}

export function signRecipientToken(secret: string, purpose: RecipientLinkPurpose, t: RecipientToken): string {
  return `${t.id}.${t.nonce}.${t.expires}.${signature(secret, purpose, t)}`;
}

/** Signature first: a token whose expiry was edited is invalid (400), not expired (410). */
export function verifyRecipientToken(secret: string, purpose: RecipientLinkPurpose, token: unknown, nowMs = Date.now()): RecipientTokenVerdict {
  if (typeof token !== 'string' || token.length > 200) return { ok: false, reason: 'invalid' };
  const m = /^([0-9a-f-]{36})\.(\d{1,9})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m || !UUID.test(m[1]!)) return { ok: false, reason: 'invalid' };
  const t = { id: m[1]!, nonce: Number(m[2]), expires: Number(m[3]) };
  if (!signatureMatches(m[4]!, signature(secret, purpose, t))) return { ok: false, reason: 'invalid' };
  if (t.expires !== 0 && t.expires * 1000 < nowMs) return { ok: false, reason: 'expired' };
  return { ok: true, ...t };
}

/** The route of each purpose (apps/api registers them outside the authenticated routes). */
export const RECIPIENT_LINK_ROUTES: Record<RecipientLinkPurpose, string> = {
  confirm: '/v2/monitor/email/confirm',
  unsubscribe: '/v2/monitor/email/unsubscribe',
};

/** `<publicUrl>/v2/monitor/email/<purpose>?token=…` */
export function recipientLink(publicUrl: string, purpose: RecipientLinkPurpose, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${RECIPIENT_LINK_ROUTES[purpose]}?token=${encodeURIComponent(token)}`;
}
