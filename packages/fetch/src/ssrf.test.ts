import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScrapeCodes, WdsError } from '@wds/errors';
import { ipLiteral, isForbiddenAddress, ssrfBlockedError } from './ssrf';

/** For each range: addresses at both edges and inside, plus the neighbours just outside. */
const V4_CASES: Array<[range: string, inside: string[], outside: string[]]> = [
  ['0.0.0.0/8', ['0.0.0.0', '0.255.255.255'], ['1.0.0.0']],
  ['10.0.0.0/8', ['10.0.0.0', '10.1.2.3', '10.255.255.255'], ['9.255.255.255', '11.0.0.0']],
  ['100.64.0.0/10', ['100.64.0.0', '100.100.100.100', '100.127.255.255'], ['100.63.255.255', '100.128.0.0']],
  ['127.0.0.0/8', ['127.0.0.1', '127.0.0.2', '127.255.255.255'], ['126.255.255.255', '128.0.0.0']],
  ['169.254.0.0/16', ['169.254.0.1', '169.254.169.254', '169.254.255.255'], ['169.253.255.255', '169.255.0.0']],
  ['172.16.0.0/12', ['172.16.0.0', '172.20.1.1', '172.31.255.255'], ['172.15.255.255', '172.32.0.0']],
  ['192.0.0.0/24', ['192.0.0.0', '192.0.0.192', '192.0.0.255'], ['191.255.255.255', '192.0.1.0']],
  ['192.0.2.0/24', ['192.0.2.0', '192.0.2.55', '192.0.2.255'], ['192.0.3.0']],
  ['192.168.0.0/16', ['192.168.0.0', '192.168.1.1', '192.168.255.255'], ['192.167.255.255', '192.169.0.0']],
  ['198.18.0.0/15', ['198.18.0.0', '198.19.255.255'], ['198.17.255.255', '198.20.0.0']],
  ['198.51.100.0/24', ['198.51.100.0', '198.51.100.255'], ['198.51.99.255', '198.51.101.0']],
  ['203.0.113.0/24', ['203.0.113.0', '203.0.113.255'], ['203.0.112.255', '203.0.114.0']],
  ['224.0.0.0/4', ['224.0.0.0', '239.255.255.250', '239.255.255.255'], ['223.255.255.255']],
  ['240.0.0.0/4', ['240.0.0.0', '250.1.2.3', '255.255.255.254'], []],
  ['255.255.255.255/32', ['255.255.255.255'], []],
];

for (const [range, inside, outside] of V4_CASES) {
  test(`IPv4 ${range} is forbidden, its neighbours are not`, () => {
    for (const ip of inside) assert.equal(isForbiddenAddress(ip), true, `${ip} should be forbidden`);
    for (const ip of outside) assert.equal(isForbiddenAddress(ip), false, `${ip} should be allowed`);
  });
}

const V6_CASES: Array<[range: string, inside: string[], outside: string[]]> = [
  [':: (unspecified)', ['::', '0:0:0:0:0:0:0:0'], []],
  ['::1 (loopback)', ['::1', '0:0:0:0:0:0:0:1', '[::1]'], []],
  ['fc00::/7 (ULA)', ['fc00::', 'fc12:3456::1', 'fd00::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], ['fbff::1', 'fe00::1']],
  ['fe80::/10 (link-local)', ['fe80::1', 'fe80::1%eth0', 'febf:ffff::1'], ['fe7f::1']],
  ['ff00::/8 (multicast)', ['ff02::1', 'ff05::1:3', 'ffff::1'], ['2001:4860::1', 'fe00::1']],
  ['2001:db8::/32 (documentation)', ['2001:db8::', '2001:db8:ffff::1', '2001:DB8::1'], ['2001:db9::1', '2001:db7::1']],
  ['fd00:ec2::254 (AWS metadata)', ['fd00:ec2::254'], []],
];

for (const [range, inside, outside] of V6_CASES) {
  test(`IPv6 ${range} is forbidden`, () => {
    for (const ip of inside) assert.equal(isForbiddenAddress(ip), true, `${ip} should be forbidden`);
    for (const ip of outside) assert.equal(isForbiddenAddress(ip), false, `${ip} should be allowed`);
  });
}

test('IPv4-mapped IPv6 (::ffff:0:0/96) is judged by the embedded IPv4 address', () => {
  for (const ip of ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::FFFF:c0a8:101']) {
    assert.equal(isForbiddenAddress(ip), true, ip);
  }
  for (const ip of ['::ffff:8.8.8.8', '::ffff:808:808', '::ffff:1.1.1.1']) {
    assert.equal(isForbiddenAddress(ip), false, ip);
  }
});

test('NAT64 (64:ff9b::/96) is judged by the embedded IPv4 address', () => {
  for (const ip of ['64:ff9b::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b::192.168.0.1']) {
    assert.equal(isForbiddenAddress(ip), true, ip);
  }
  for (const ip of ['64:ff9b::8.8.8.8', '64:ff9b::101:101']) {
    assert.equal(isForbiddenAddress(ip), false, ip);
  }
});

test('extra IPv6 forms that tunnel to IPv4 are judged by the embedded address', () => {
  // Deprecated IPv4-compatible ::a.b.c.d and 6to4 2002:AABB:CCDD::/48.
  assert.equal(isForbiddenAddress('::127.0.0.1'), true);
  assert.equal(isForbiddenAddress('::8.8.8.8'), false);
  assert.equal(isForbiddenAddress('2002:7f00:1::1'), true);
  assert.equal(isForbiddenAddress('2002:a00:1::'), true);
  assert.equal(isForbiddenAddress('2002:808:808::1'), false);
  assert.equal(isForbiddenAddress('64:ff9b:1::1'), true);
  assert.equal(isForbiddenAddress('fec0::1'), true);
  assert.equal(isForbiddenAddress('100::1'), true);
});

test('public addresses are allowed', () => {
  for (const ip of [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.67.1.1',
    '2606:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4001:81b::200e',
    '[2606:4700::1111]',
  ]) {
    assert.equal(isForbiddenAddress(ip), false, `${ip} should be allowed`);
  }
});

test('anything that is not an IP literal fails closed', () => {
  for (const s of ['', 'localhost', 'example.com', '127.1', '0x7f000001', '1.2.3', '::g', '1:2:3:4:5:6:7:8:9']) {
    assert.equal(isForbiddenAddress(s), true, JSON.stringify(s));
  }
});

test('ipLiteral recognises URL hostnames that are IP literals', () => {
  assert.equal(ipLiteral('127.0.0.1'), '127.0.0.1');
  assert.equal(ipLiteral('[::1]'), '::1');
  assert.equal(ipLiteral(new URL('http://0x7f000001/').hostname), '127.0.0.1');
  assert.equal(ipLiteral(new URL('http://127.1/').hostname), '127.0.0.1');
  assert.equal(ipLiteral(new URL('http://[::ffff:127.0.0.1]/').hostname), '::ffff:7f00:1');
  assert.equal(ipLiteral('example.com'), null);
});

test('ssrfBlockedError carries the documented kind, code and message', () => {
  const e = ssrfBlockedError('localhost', '127.0.0.1');
  assert.ok(e instanceof WdsError);
  assert.equal(e.kind, 'URL_BLOCKED');
  assert.equal(e.code, ScrapeCodes.SSRF_BLOCKED);
  assert.equal(e.retryable, false);
  assert.equal(
    e.message,
    'URL blocked: localhost resolves to a private, loopback or reserved address (127.0.0.1). ' +
      'Set WDS_ALLOW_PRIVATE_NETWORK=true to allow it.',
  );
});
