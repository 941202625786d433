/** File storage for links the service hands out (screenshots, action PDFs). See README.md. */
export type { FileBody, FileContentType, FileStore, StoredFile } from './types';
export { contentTypeOf, extensionFor, isMediaKey, isValidKey, scrapeFileKey } from './keys';
export { fileSignature, signFileUrl, verifyFileLink, type LinkVerdict } from './signing';
export { lazySigningSecret, resolveSigningSecret, SECRET_FILE } from './secret';
export { FILES_ROUTE, LocalFileStore, type LocalFileStoreOptions } from './local';
export { RECIPIENT_LINK_ROUTES, recipientLink, signRecipientToken, verifyRecipientToken, type RecipientLinkPurpose, type RecipientToken, type RecipientTokenVerdict } from './recipient-links';
