/** File storage for links the service hands out (screenshots, action PDFs, media). See README.md. */
export type { FileBody, FileContentType, FileStore, StoredFile } from './types';
export { contentTypeOf, extensionFor, isMediaKey, isValidKey, scrapeFileKey } from './keys';
export { fileSignature, signFileUrl, verifyFileLink, type LinkVerdict } from './signing';
export { lazySigningSecret, resolveSigningSecret, SECRET_FILE } from './secret';
export { FILES_ROUTE, LocalFileStore, type LocalFileStoreOptions } from './local';
export { PRESIGNED_MAX_SECONDS, S3FileStore, type S3FileStoreOptions } from './s3';
export { fileStoreFromEnv, type FileStoreEnv } from './from-env';
export { RECIPIENT_LINK_ROUTES, recipientLink, signRecipientToken, verifyRecipientToken, type RecipientLinkPurpose, type RecipientToken, type RecipientTokenVerdict } from './recipient-links';
