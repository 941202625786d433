import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { exitOf, until } from '@wds/test-utils';
import { spawnUntilReady, type AppProcess } from '@wds/launch';
import { supervise } from './supervise';

// The launcher's supervision with real child processes: a tiny program that says it is ready,
// then lives on or exits after CHILD_LIFE_MS with code 3.
let dir: string;
let script: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'wds-supervise-'));
  script = join(dir, 'child.mjs');
  writeFileSync(
    script,
    `process.stdout.write('child ready\\n');
     const life = Number(process.env.CHILD_LIFE_MS ?? 0);
     if (life) setTimeout(() => process.exit(3), life); else setInterval(() => {}, 1_000);`,
  );
});
after(() => rmSync(dir, { recursive: true, force: true }));

function child(env: Record<string, string> = {}): () => Promise<AppProcess> {
  return async () => {
    const { child, output } = await spawnUntilReady('child', [script], { ...process.env, ...env }, /child ready/);
    return { child, output };
  };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('a child that dies is restarted, after a backoff that doubles; stop ends it for good', async () => {
  const logs: string[] = [];
  let gaveUp = false;
  const s = await supervise({ name: 'worker', start: child(), log: (m) => logs.push(m), maxCrashes: 5, windowMs: 60_000, stopGraceMs: 2_000, onGiveUp: () => (gaveUp = true), backoffMs: 100 });
  const first = s.current().child;
  first.kill('SIGKILL');
  const second = await until(() => (s.current().child !== first ? s.current().child : null), 'a restarted child', { timeoutMs: 30_000 });
  assert.ok(alive(second.pid!));
  assert.ok(logs.some((l) => l === 'worker was killed by SIGKILL; restarting it in 100 ms (crash 1 of 5 allowed within 60 s)'), logs.join('\n'));
  second.kill('SIGKILL');
  const third = await until(() => (s.current().child !== second ? s.current().child : null), 'a second restart', { timeoutMs: 30_000 });
  assert.ok(logs.some((l) => l.includes('restarting it in 200 ms (crash 2 of 5')), logs.join('\n'));

  await s.stop();
  assert.ok(!alive(third.pid!), 'stopped');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(s.current().child, third, 'not restarted after stop');
  assert.equal(gaveUp, false);
});

test('a crash loop is given up: no more restarts, onGiveUp once', async () => {
  const logs: string[] = [];
  let gaveUp = 0;
  let starts = 0;
  const start = child({ CHILD_LIFE_MS: '100' });
  const s = await supervise({
    name: 'api',
    start: () => (starts++, start()),
    log: (m) => logs.push(m),
    maxCrashes: 3,
    windowMs: 60_000,
    stopGraceMs: 2_000,
    onGiveUp: () => gaveUp++,
    backoffMs: 50,
  });
  await until(() => gaveUp > 0, 'the supervisor to give up', { timeoutMs: 30_000 });
  await exitOf(s.current().child);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(gaveUp, 1);
  assert.equal(starts, 3, 'the first start and two restarts');
  assert.match(logs.at(-1)!, /^api exited with code 3; 3 crashes within 60 s: crash loop, not restarting it$/);
  await s.stop();
});
