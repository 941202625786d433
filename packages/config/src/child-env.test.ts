import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childEnv } from './child-env';

const worker = {
  PATH: '/usr/bin',
  HOME: '/home/w',
  TMPDIR: '/tmp/w',
  TZ: 'UTC',
  LANG: 'C.UTF-8',
  LC_ALL: 'C',
  TESSDATA_PREFIX: '/opt/tess',
  DATABASE_URL: 'postgres://u:p@db/wds',
  OPENAI_API_KEY: 'sk-secret',
  WDS_FILE_SIGNING_SECRET: 's',
  WDS_API_KEY: 'k',
  WDS_SMTP_URL: 'smtp://u:p@mail',
  NODE_OPTIONS: '--inspect',
  LD_PRELOAD: '/x.so',
};

test('childEnv keeps paths, locale and timezone; no secret, no loader or Node switches', () => {
  assert.deepEqual(childEnv({}, worker), { PATH: '/usr/bin', HOME: '/home/w', TMPDIR: '/tmp/w', TZ: 'UTC', LANG: 'C.UTF-8', LC_ALL: 'C' });
});

test('childEnv passes what the caller names and sets what it sets', () => {
  const env = childEnv({ pass: ['TESSDATA_PREFIX', 'ABSENT'], set: { OMP_THREAD_LIMIT: '1', HOME: '/job' } }, worker);
  assert.equal(env.TESSDATA_PREFIX, '/opt/tess');
  assert.equal(env.OMP_THREAD_LIMIT, '1');
  assert.equal(env.HOME, '/job');
  assert.ok(!('ABSENT' in env));
  assert.ok(!Object.keys(env).some((k) => k in { DATABASE_URL: 1, OPENAI_API_KEY: 1, WDS_FILE_SIGNING_SECRET: 1, WDS_API_KEY: 1, WDS_SMTP_URL: 1 }));
});
