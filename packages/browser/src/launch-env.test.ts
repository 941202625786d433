/**
 * Chromium never holds the worker's secrets: a browser launched by the pool has only the
 * allow-listed variables in its environment (read from /proc/<pid>/environ of the browser
 * process and of every process it started), and the sandbox follows the user.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { BrowserPool, browserEnv, chromiumSandbox } from './index';

const SENTINEL = 'wds-sentinel-4f1c9a';
let server: http.Server;
let origin = '';

before(async () => {
  server = http.createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<p>env test page</p><script>document.title = "x"</script>'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

/** The process and all its descendants (Chromium's zygotes, renderers, utility processes). */
function tree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'))![1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // exited meanwhile
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]!) ?? []));
  return out;
}

test("the browser's processes see none of the worker's variables", async () => {
  process.env.WDS_TEST_SECRET_SENTINEL = SENTINEL;
  process.env.DATABASE_URL = `postgres://wds:${SENTINEL}@db.internal/wds`;
  process.env.OPENAI_API_KEY = `sk-${SENTINEL}`;
  const pool = new BrowserPool({ maxConcurrentPages: 1, recycleAfterPages: 100 });
  try {
    const r = await pool.render({ url: `${origin}/`, timeoutMs: 30_000, waitFor: 0, mobile: false, blockAds: false, skipTlsVerification: false, allowPrivateNetwork: true });
    assert.match(r.html, /env test page/);
    const [browserPid] = pool.browserPids();
    assert.ok(browserPid, 'the pool knows its browser process');
    const pids = tree(browserPid);
    assert.ok(pids.length > 1, 'Chromium started helper processes');
    let read = 0;
    for (const pid of pids) {
      let environ: string;
      try {
        environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
      } catch {
        continue; // exited
      }
      read++;
      assert.ok(!environ.includes(SENTINEL), `process ${pid} holds a worker secret`);
      const names = environ.split('\0').filter(Boolean).map((kv) => kv.slice(0, kv.indexOf('=')));
      assert.ok(!names.includes('DATABASE_URL') && !names.includes('OPENAI_API_KEY'), `process ${pid}: ${names.join(' ')}`);
    }
    assert.ok(read >= 2, 'environments were read');
  } finally {
    await pool.close();
    delete process.env.WDS_TEST_SECRET_SENTINEL;
    delete process.env.DATABASE_URL;
    delete process.env.OPENAI_API_KEY;
  }
});

test('browserEnv keeps paths, fonts, locale and timezone only', () => {
  const env = browserEnv({ PATH: '/usr/bin', HOME: '/root', TZ: 'UTC', LANG: 'C.UTF-8', LC_ALL: 'C', FONTCONFIG_PATH: '/etc/fonts', DATABASE_URL: 'postgres://x', WDS_FILE_SIGNING_SECRET: 's', AWS_SECRET_ACCESS_KEY: 'k', NODE_OPTIONS: '--inspect' });
  assert.deepEqual(env, { PATH: '/usr/bin', HOME: '/root', TZ: 'UTC', LANG: 'C.UTF-8', LC_ALL: 'C', FONTCONFIG_PATH: '/etc/fonts' });
});

test('the sandbox follows the user: auto tries it unless root, on as root is refused', () => {
  assert.deepEqual(chromiumSandbox('auto', 1000), { sandbox: true, fallback: true });
  assert.deepEqual(chromiumSandbox('auto', 0), { sandbox: false, fallback: false });
  assert.deepEqual(chromiumSandbox('off', 1000), { sandbox: false, fallback: false });
  assert.deepEqual(chromiumSandbox('on', 1000), { sandbox: true, fallback: false });
  assert.throws(() => chromiumSandbox('on', 0), /cannot run sandboxed as root/);
});
