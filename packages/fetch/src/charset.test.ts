import { test } from 'node:test';
import assert from 'node:assert/strict';
import iconv from 'iconv-lite';
import { charsetFromContentType, decodeBody, normalizeCharset, sniffMetaCharset } from './charset';

const JA = '日本語のページです';

test('Shift_JIS declared by the Content-Type header', () => {
  const body = iconv.encode(`<html><body><p>${JA}</p></body></html>`, 'shift_jis');
  const out = decodeBody(body, 'text/html; charset=Shift_JIS');
  assert.equal(out.charset, 'shift_jis');
  assert.ok(out.text.includes(JA));
});

test('Shift_JIS declared only by <meta charset>', () => {
  const body = iconv.encode(`<html><head><meta charset="Shift_JIS"><title>t</title></head><body>${JA}</body></html>`, 'shift_jis');
  const out = decodeBody(body, 'text/html');
  assert.equal(out.charset, 'shift_jis');
  assert.ok(out.text.includes(JA));
});

test('Shift_JIS declared by <meta http-equiv="Content-Type">, label x-sjis', () => {
  const body = iconv.encode(
    `<html><head><meta http-equiv="Content-Type" content="text/html; charset=x-sjis"></head><body>${JA}</body></html>`,
    'shift_jis',
  );
  const out = decodeBody(body, undefined);
  assert.equal(out.charset, 'shift_jis');
  assert.ok(out.text.includes(JA));
});

test('UTF-8 BOM wins over a wrong header and is stripped', () => {
  const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`<p>${JA} é</p>`, 'utf8')]);
  const out = decodeBody(body, 'text/html; charset=iso-8859-1');
  assert.equal(out.charset, 'utf-8');
  assert.equal(out.text, `<p>${JA} é</p>`);
});

test('UTF-16LE and UTF-16BE BOMs', () => {
  const le = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode('<p>é日</p>', 'utf-16le')]);
  assert.deepEqual(decodeBody(le, 'text/html; charset=utf-8'), { text: '<p>é日</p>', charset: 'utf-16le' });
  const be = Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode('<p>é日</p>', 'utf-16be')]);
  assert.deepEqual(decodeBody(be, undefined), { text: '<p>é日</p>', charset: 'utf-16be' });
});

test('windows-1252 page (declared as iso-8859-1) with é and a curly quote', () => {
  const body = iconv.encode('<p>café – “quoted”</p>', 'windows-1252');
  const out = decodeBody(body, 'text/html; charset=ISO-8859-1');
  assert.equal(out.charset, 'windows-1252');
  assert.equal(out.text, '<p>café – “quoted”</p>');
});

test('header beats <meta>', () => {
  const body = iconv.encode('<meta charset="shift_jis"><p>café</p>', 'windows-1252');
  const out = decodeBody(body, 'text/html; charset="windows-1252"');
  assert.equal(out.charset, 'windows-1252');
  assert.ok(out.text.includes('café'));
});

test('no declaration defaults to utf-8', () => {
  const out = decodeBody(Buffer.from('<p>héllo</p>', 'utf8'), 'text/html');
  assert.deepEqual(out, { text: '<p>héllo</p>', charset: 'utf-8' });
});

test('unknown labels are skipped, ending at utf-8', () => {
  const out = decodeBody(Buffer.from('<meta charset="bogus-9"><p>héllo</p>', 'utf8'), 'text/html; charset=nope');
  assert.equal(out.charset, 'utf-8');
  assert.ok(out.text.includes('héllo'));
});

test('an unknown header label lets the <meta> decide', () => {
  const body = iconv.encode(`<meta charset="euc-jp"><p>${JA}</p>`, 'euc-jp');
  const out = decodeBody(body, 'text/html; charset=nope');
  assert.equal(out.charset, 'euc-jp');
  assert.ok(out.text.includes(JA));
});

test('a <meta> beyond the first 4 KB is not sniffed', () => {
  const body = Buffer.from(`<!--${'x'.repeat(5000)}--><meta charset="shift_jis"><p>hi</p>`, 'latin1');
  assert.equal(decodeBody(body, undefined).charset, 'utf-8');
});

test('label normalisation', () => {
  for (const l of ['x-sjis', 'sjis', 'shift-jis', 'Shift_JIS', 'windows-31j', 'MS932']) assert.equal(normalizeCharset(l), 'shift_jis', l);
  for (const l of ['latin1', 'ISO-8859-1', 'us-ascii', 'cp1252']) assert.equal(normalizeCharset(l), 'windows-1252', l);
  assert.equal(normalizeCharset('gb2312'), 'gbk');
  assert.equal(normalizeCharset('UTF8'), 'utf-8');
  assert.equal(normalizeCharset('nope'), null);
  assert.equal(charsetFromContentType('text/html; Charset="EUC-JP"'), 'EUC-JP');
  assert.equal(charsetFromContentType('text/html'), null);
  assert.equal(sniffMetaCharset(Buffer.from('<meta content="text/html; charset=gbk" http-equiv="content-type">')), 'gbk');
});

test('gbk and euc-kr decode with the browser supersets', () => {
  const zh = '中文网页';
  assert.ok(decodeBody(iconv.encode(zh, 'gbk'), 'text/html; charset=gb2312').text.includes(zh));
  const ko = '한국어 페이지';
  const out = decodeBody(iconv.encode(ko, 'cp949'), 'text/html; charset=euc-kr');
  assert.equal(out.charset, 'euc-kr');
  assert.equal(out.text, ko);
});
