import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SECRET_FILE = 'file-signing-secret';

/**
 * The file-link signing secret: the configured one (WDS_FILE_SIGNING_SECRET), else the one kept
 * in `<dataDir>/file-signing-secret`, generated on first use. Creation is atomic (write a temp
 * file, hard-link it into place): an API and a worker starting together on one machine end up
 * with the same secret. Processes on other machines must be given the secret explicitly.
 */
export function resolveSigningSecret(configured: string | undefined, dataDir: string): string {
  if (configured) return configured;
  const file = join(dataDir, SECRET_FILE);
  const existing = readSecret(file);
  if (existing) return existing;
  mkdirSync(dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, randomBytes(32).toString('hex'), { mode: 0o600 });
  try {
    linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    unlinkSync(tmp);
  }
  const secret = readSecret(file);
  if (!secret) throw new Error(`${file} is empty; delete it or set WDS_FILE_SIGNING_SECRET`);
  return secret;
}

function readSecret(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim() || null;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** Lazily resolved (and then remembered): processes that never touch a file never create the secret. */
export function lazySigningSecret(configured: string | undefined, dataDir: string): () => string {
  let secret: string | undefined;
  return () => (secret ??= resolveSigningSecret(configured, dataDir));
}
