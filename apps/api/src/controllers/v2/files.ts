import type { FastifyReply, FastifyRequest } from 'fastify';
import { WdsError } from '@wds/errors';
import { verifyFileLink, type FileStore } from '@wds/storage';

export interface FilesConfig {
  store: Pick<FileStore, 'open'>;
  /** The signing secret (resolved on first use: a process that never serves a file never creates it). */
  secret: () => string;
}

/**
 * GET /v2/files/<key>?expires=…&sig=…: files that workers stored for scrapes (screenshots,
 * action PDFs, audio, video). No bearer token — the link is the credential: a missing or wrong signature is
 * 403, a valid but expired link 410, both with the error body. Registered outside the
 * authenticated v2 routes.
 */
export function filesController(cfg: FilesConfig) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const key = (req.params as { '*': string })['*'] ?? '';
    const q = req.query as { expires?: unknown; sig?: unknown };
    const verdict = verifyFileLink(cfg.secret(), key, typeof q.expires === 'string' ? q.expires : undefined, typeof q.sig === 'string' ? q.sig : undefined);
    if (verdict === 'bad-signature') {
      throw new WdsError('FORBIDDEN', { code: 'FILE_LINK_INVALID', message: 'Forbidden: this file link is not valid (missing or wrong signature).' });
    }
    if (verdict === 'expired') {
      return reply.status(410).send({ success: false, error: 'Gone: this file link has expired. Scrape the page again for a fresh link.', code: 'FILE_LINK_EXPIRED' });
    }
    const file = await cfg.store.open(key);
    if (!file) throw new WdsError('NOT_FOUND', { code: 'FILE_NOT_FOUND', message: 'Not Found: the file no longer exists.' });
    const expiresIn = Math.max(0, Number(q.expires) - Math.floor(Date.now() / 1000));
    return reply
      .header('content-type', file.contentType)
      .header('content-length', String(file.size))
      .header('cache-control', `private, max-age=${expiresIn}`)
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', 'inline')
      .send(file.stream);
  };
}
