import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileSignature, recipientLink, signRecipientToken, verifyRecipientToken } from './index';

const id = '0b3f5c1e-2a4d-4e6f-8a9b-0c1d2e3f4a5b';
const now = 1_700_000_000_000;

test('recipient tokens: valid until expiry, bound to their purpose, id and nonce; any edit is invalid', () => {
  const t = signRecipientToken('s3cret', 'confirm', { id, nonce: 2, expires: now / 1000 + 60 });
  assert.deepEqual(verifyRecipientToken('s3cret', 'confirm', t, now), { ok: true, id, nonce: 2, expires: now / 1000 + 60 });
  assert.deepEqual(verifyRecipientToken('s3cret', 'confirm', t, now + 61_000), { ok: false, reason: 'expired' });
  assert.equal(verifyRecipientToken('s3cret', 'unsubscribe', t, now).ok, false, 'a confirm token is no unsubscribe token');
  assert.equal(verifyRecipientToken('other', 'confirm', t, now).ok, false);
  const [, , expires, sig] = t.split('.');
  for (const edited of [`${id}.3.${expires}.${sig}`, `${id}.2.${Number(expires) + 3600}.${sig}`, `${id.replace('0b3f', '0b40')}.2.${expires}.${sig}`, t.slice(0, -1), `${t}A`, '', 'x.y.z.w']) {
    assert.deepEqual(verifyRecipientToken('s3cret', 'confirm', edited, now), { ok: false, reason: 'invalid' }, edited);
  }
  // An expired token whose expiry was moved forward is invalid, not valid.
  assert.equal(verifyRecipientToken('s3cret', 'confirm', `${id}.2.${Number(expires) + 3600}.${sig}`, now + 61_000).ok, false);
  for (const notString of [undefined, null, 42, ['a'], { t }]) assert.equal(verifyRecipientToken('s3cret', 'confirm', notString, now).ok, false);
});

test('recipient tokens: expires 0 never expires; a file signature is never a token signature', () => {
  const t = signRecipientToken('s3cret', 'unsubscribe', { id, nonce: 0, expires: 0 });
  assert.equal(verifyRecipientToken('s3cret', 'unsubscribe', t, now * 10).ok, true);
  const fileSig = fileSignature('s3cret', id, 0);
  assert.equal(verifyRecipientToken('s3cret', 'unsubscribe', `${id}.0.0.${fileSig}`, now).ok, false);
  assert.equal(recipientLink('https://wds.example/', 'unsubscribe', t), `https://wds.example/v2/monitor/email/unsubscribe?token=${t}`);
});
