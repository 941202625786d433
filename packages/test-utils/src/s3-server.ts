import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { onPath } from '@wds/config/executables';
import { freePort, stopChild } from '@wds/launch';

/** The S3-compatible server the tests run (Versity's gateway; SeaweedFS's module cannot be `go install`ed). */
export const S3_SERVER_INSTALL = 'go install github.com/versity/versitygw/cmd/versitygw@v1.8.0';

export function findS3Server(explicit = process.env.WDS_TEST_S3_SERVER): string | null {
  if (explicit) return existsSync(explicit) ? explicit : null;
  const found = onPath('versitygw');
  if (found) return found;
  const goBin = join(homedir(), 'go', 'bin', 'versitygw');
  return existsSync(goBin) ? goBin : null;
}

export interface S3TestServer {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The directory holding the buckets (a bucket is a directory of it, an object a file). */
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * A real S3-compatible server on 127.0.0.1 (a free port, its own temp directory), like the tests' Postgres and
 * Temporal. A missing binary is an error, not a skip: CI installs it (.ci/run), and a silent skip would let
 * the S3 store go untested.
 */
export async function startS3TestServer(): Promise<S3TestServer> {
  const bin = findS3Server();
  if (!bin) throw new Error(`no S3 test server found (WDS_TEST_S3_SERVER, versitygw on PATH, ~/go/bin/versitygw). Install it with: ${S3_SERVER_INSTALL}   (or run .ci/run, which does)`);
  const dataDir = mkdtempSync(join(tmpdir(), 'wds-s3-'));
  const root = join(dataDir, 'buckets');
  mkdirSync(root);
  const port = await freePort();
  const accessKeyId = 'wdstestaccess';
  const secretAccessKey = 'wds-test-secret-key-0123456789';
  const child = spawn(bin, ['--access', accessKeyId, '--secret', secretAccessKey, '--port', `127.0.0.1:${port}`, 'posix', root], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const deadline = Date.now() + 30_000;
  while (!(await reachable(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`S3 test server did not start (exit ${child.exitCode}): ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId,
    secretAccessKey,
    dataDir: root,
    stop: async () => {
      await stopChild(child, 5_000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => (s.destroy(), resolve(true)));
    s.on('error', () => resolve(false));
  });
}
