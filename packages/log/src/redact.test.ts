import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { createLogger, forgetInLogs, REDACTED, redactValue, scrubString, withIds } from './index';

/** A logger writing into an array of parsed lines. */
function capture(level: 'trace' | 'debug' | 'info' | 'warn' = 'trace') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  const log = createLogger({ name: 'test', level, destination });
  return { log, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, any>) };
}

describe('redactValue', () => {
  test('credential keys go at any depth, headers objects included, any case', () => {
    const out = redactValue({
      url: 'https://example.com/a',
      headers: { Authorization: 'Bearer SECRET-a', COOKIE: 'sid=SECRET-b', 'Set-Cookie': ['a=SECRET-c'], 'Proxy-Authorization': 'Basic SECRET-d', 'X-Api-Key': 'SECRET-e', accept: 'text/html' },
      deep: { deeper: [{ refresh_token: 'SECRET-f', clientSecret: 'SECRET-g', password: 'SECRET-h', apiKey: 'SECRET-i', 'api-key': 'SECRET-j' }] },
      totalTokens: 12,
    }) as any;
    const text = JSON.stringify(out);
    assert.ok(!text.includes('SECRET-'), text);
    assert.equal(out.headers.Authorization, REDACTED);
    assert.equal(out.headers.accept, 'text/html', 'other headers stay');
    assert.equal(out.url, 'https://example.com/a');
    assert.equal(out.totalTokens, 12, 'counts named after tokens stay readable');
  });

  test('errors: message, code, frames and cause kept; credential properties and call arguments removed', () => {
    const cause = Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' });
    const e = Object.assign(new Error('Failed query: insert into x values ($1)\nparams: {"headers":{"Cookie":"sid=SECRET-y"}}', { cause }), {
      query: 'insert into x values ($1)',
      params: ['{"headers":{"Authorization":"Bearer SECRET-x"}}'],
      options: { headers: { authorization: 'Bearer SECRET-x' } },
      status: 500,
    });
    const out = redactValue(e) as any;
    const text = JSON.stringify(out);
    assert.ok(!text.includes('SECRET-'), text);
    assert.equal(out.type, 'Error');
    assert.match(out.message, /^Failed query: insert into x/);
    assert.equal(out.params, REDACTED);
    assert.equal(out.status, 500);
    assert.equal(out.cause.code, 'ECONNREFUSED');
    assert.match(out.stack, /^at /, 'frames only, without the message line');
  });

  test('cycles, depth and huge strings are bounded', () => {
    const a: any = { name: 'a' };
    a.self = a;
    let deep: any = { leaf: true };
    for (let i = 0; i < 50; i++) deep = { deep };
    const out = redactValue({ a, deep, big: 'x'.repeat(100_000) }) as any;
    assert.equal(out.a.self, '[Circular]');
    assert.ok(JSON.stringify(out).length < 20_000);
  });

  test('header pairs (rawHeaders) lose the value after a secret name', () => {
    const out = redactValue(['Host', 'example.com', 'Cookie', 'sid=SECRET-1', 'Authorization', 'Bearer x']) as string[];
    assert.deepEqual(out, ['Host', 'example.com', 'Cookie', REDACTED, 'Authorization', REDACTED]);
  });
});

describe('scrubString', () => {
  for (const [label, input, kept] of [
    ['query token', 'GET https://h.example/p?a=1&token=SECRET-z&b=2', 'GET https://h.example/p?a=1&token=[REDACTED]&b=2'],
    ['query access_token first', 'https://h.example/p?access_token=SECRET-z', 'https://h.example/p?access_token=[REDACTED]'],
    ['query api_key and key', 'https://h.example/?api_key=SECRET-1&key=SECRET-2&q=cats', 'https://h.example/?api_key=[REDACTED]&key=[REDACTED]&q=cats'],
    ['signed file link', 'http://localhost:3002/v2/files/a.png?expires=1&sig=SECRET-s', 'http://localhost:3002/v2/files/a.png?expires=1&sig=[REDACTED]'],
    ['percent-encoded name', 'https://h.example/?pass%77ord=SECRET-p', 'https://h.example/?pass%77ord=[REDACTED]'],
    ['fragment token', 'https://h.example/cb#access_token=SECRET-f&x=1', 'https://h.example/cb#access_token=[REDACTED]&x=1'],
    ['userinfo', 'fetching https://bob:SECRET-u@h.example/x', 'fetching https://[REDACTED]@h.example/x'],
    ['bearer', 'sent Authorization: Bearer SECRET-abc.def', 'sent Authorization: [REDACTED] [REDACTED]'],
    ['json pair', '{"Cookie":"sid=SECRET-y","a":"b"}', '{"Cookie":"[REDACTED]","a":"b"}'],
    ['json in json', '{\\"Authorization\\":\\"Basic SECRET-q\\"}', '{\\"Authorization\\":\\"[REDACTED]\\"}'],
    ['inspect pair', "{ password: 'SECRET-h' }", "{ password: '[REDACTED]' }"],
    ['bare pair', 'login with password=SECRET-h now', 'login with password=[REDACTED] now'],
  ] as const) {
    test(label, () => {
      const out = scrubString(input);
      assert.ok(!out.includes('SECRET-'), out);
      assert.equal(out, kept);
    });
  }

  test('ordinary text and URLs are left alone', () => {
    for (const s of ['https://example.com/a?page=2&q=token+bucket', 'Connection to 127.0.0.1 failed (ECONNREFUSED)', 'ratio: 3', 'keyboard=qwerty']) {
      assert.equal(scrubString(s), s);
    }
  });

  test('linear on hostile input', () => {
    const hostile = ['?a='.repeat(50_000), '"a":"'.repeat(50_000), 'Bearer '.repeat(50_000), 'x:'.repeat(100_000), '\\"'.repeat(100_000)];
    for (const h of hostile) {
      const t0 = performance.now();
      scrubString(h);
      assert.ok(performance.now() - t0 < 3_000, `took ${performance.now() - t0} ms`);
    }
  });

  test('forgetInLogs hides a value until released', () => {
    const url = 'https://zdr.example/private/path?x=1';
    const release = forgetInLogs([url, '/private/path?x=1']);
    assert.ok(!scrubString(`failed ${url} and again /private/path?x=1`).includes('private'));
    release();
    assert.ok(scrubString(`failed ${url}`).includes('private'));
  });
});

describe('logger', () => {
  test('one JSON line per event with level label, time, name and the bound ids', () => {
    const { log, parsed } = capture();
    withIds(log, { jobId: 'j1', scrapeId: undefined, teamId: 't1' }).info({ route: '/v2/scrape' }, 'request');
    const [line] = parsed();
    assert.equal(line!.level, 'info');
    assert.equal(line!.name, 'test');
    assert.equal(line!.msg, 'request');
    assert.equal(line!.jobId, 'j1');
    assert.equal(line!.teamId, 't1');
    assert.ok(!('scrapeId' in line!));
    assert.ok(!Number.isNaN(Date.parse(line!.time)));
  });

  test('every way of logging is redacted: objects, errors, messages, interpolation, bindings', () => {
    const { log, lines, parsed } = capture();
    const err = Object.assign(new Error('GET https://h.example/?token=SECRET-1 failed'), { headers: { cookie: 'SECRET-2' } });
    log.error(err);
    log.error({ err }, 'request failed');
    log.warn({ options: { headers: { Authorization: 'Bearer SECRET-3' } } });
    log.info('calling https://h.example/?api_key=SECRET-4');
    log.info('with %s and %o', 'password=SECRET-5', { secret: 'SECRET-6' });
    log.child({ token: 'SECRET-7', jobId: 'j' }).info('child');
    const text = lines.join('\n');
    assert.ok(!text.includes('SECRET-'), text);
    const p = parsed();
    assert.equal(p.length, 6);
    assert.match(p[0]!.msg, /^GET https:\/\/h\.example\/\?token=\[REDACTED\] failed$/, 'the message comes from the redacted error');
    assert.equal(p[1]!.msg, 'request failed');
    assert.equal(p[1]!.err.headers.cookie, REDACTED);
    assert.equal(p[5]!.jobId, 'j');
  });

  test('the level filters', () => {
    const { log, lines } = capture('warn');
    log.info('hidden');
    log.warn('shown');
    assert.equal(lines.length, 1);
  });
});

describe('announce', () => {
  test('lifecycle lines are written whatever the level', async () => {
    const { announce } = await import('./index');
    const { log, parsed } = capture('warn');
    announce(log, { port: 1 }, 'listening');
    log.info('hidden');
    assert.deepEqual(parsed().map((l) => [l.level, l.msg, l.port]), [['info', 'listening', 1]]);
  });
});
