import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The Python virtualenv the ecosystem suites run in (.venv-py at the repository root, made by
 * .ci/run from tests/python/requirements.txt). Tests never skip without it: they fail with the
 * one command that creates it.
 */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const VENV_BIN = `${ROOT}.venv-py/bin`;
const REQUIREMENTS = `${ROOT}tests/python/requirements.txt`;
export const VENV_COMMAND = 'python3 -m venv .venv-py && .venv-py/bin/pip install -r tests/python/requirements.txt';

/** The requirements' hash, as .ci/run stamps it into .venv-py/requirements.sha256 after installing. */
export function requirementsHash(): string {
  return createHash('sha256').update(readFileSync(REQUIREMENTS)).digest('hex');
}

/** Throws the one-line fix when the virtualenv or one of its tools is missing or out of date. */
export function requireVenv(tool: 'pytest' | 'schemathesis' | 'python'): string {
  const bin = `${VENV_BIN}/${tool === 'schemathesis' ? 'st' : tool}`;
  if (!existsSync(bin)) throw new Error(`${bin} is missing: create the Python test environment with \`${VENV_COMMAND}\` (or run .ci/run)`);
  const stamp = `${ROOT}.venv-py/requirements.sha256`;
  if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() !== requirementsHash()) {
    throw new Error(`.venv-py is older than tests/python/requirements.txt: update it with \`.venv-py/bin/pip install -r tests/python/requirements.txt\` (or run .ci/run)`);
  }
  return bin;
}

/** Runs a venv tool to its end; its output goes to this process's (the test log). */
export function runTool(bin: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (b: Buffer) => {
      output += b.toString();
      if (output.length > 200_000) output = output.slice(-100_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
