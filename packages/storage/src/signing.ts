import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Links to stored files carry `expires` (unix seconds) and `sig` = base64url(HMAC-SHA256(secret,
 * "v1\n<key>\n<expires>")). No bearer token is needed to follow them; whoever holds the link
 * holds the file until it expires. API and workers must share the secret.
 */
export function fileSignature(secret: string, key: string, expires: number): string {
  return hmacSignature(secret, `v1\n${key}\n${expires}`);
}

/**
 * The one signature scheme of every link the service signs (file links, monitor recipient
 * links): base64url(HMAC-SHA256(secret, message)). Each kind of link puts its own prefix in the
 * message, so no link's signature is ever valid as another kind's.
 */
export function hmacSignature(secret: string, message: string): string {
  return createHmac('sha256', secret).update(message).digest('base64url');
}

/** Whether a given signature is the expected one, compared in constant time. */
export function signatureMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export type LinkVerdict = 'ok' | 'bad-signature' | 'expired';

/** Signature first: a link whose expiry was edited is tampered (403), not expired (410). */
export function verifyFileLink(secret: string, key: string, expires: string | undefined, sig: string | undefined, nowMs = Date.now()): LinkVerdict {
  if (!expires || !sig || !/^\d{1,12}$/.test(expires)) return 'bad-signature';
  if (!signatureMatches(sig, fileSignature(secret, key, Number(expires)))) return 'bad-signature';
  return Number(expires) * 1000 < nowMs ? 'expired' : 'ok';
}

/** `<publicUrl><routePrefix>/<key>?expires=…&sig=…` */
export function signFileUrl(opts: { publicUrl: string; routePrefix: string; secret: string; key: string; ttlSeconds: number; nowMs?: number }): string {
  const expires = Math.floor((opts.nowMs ?? Date.now()) / 1000) + opts.ttlSeconds;
  const base = opts.publicUrl.replace(/\/+$/, '');
  return `${base}${opts.routePrefix}/${opts.key}?expires=${expires}&sig=${fileSignature(opts.secret, opts.key, expires)}`;
}
