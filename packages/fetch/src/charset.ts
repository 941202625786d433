import iconv from 'iconv-lite';
import type { DecodedBody } from './types';

/**
 * Encoding labels → canonical names, after the WHATWG Encoding Standard, which
 * is what browsers (and so the pages' authors) actually rely on: `latin1` and
 * `iso-8859-1` mean windows-1252, `sjis` variants mean Shift_JIS, gb2312 means GBK…
 */
const LABELS: Record<string, string[]> = {
  'utf-8': ['unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'utf-8', 'utf8', 'x-unicode20utf8'],
  ibm866: ['866', 'cp866', 'csibm866', 'ibm866'],
  'iso-8859-2': ['csisolatin2', 'iso-8859-2', 'iso-ir-101', 'iso8859-2', 'iso88592', 'iso_8859-2', 'iso_8859-2:1987', 'l2', 'latin2'],
  'iso-8859-3': ['csisolatin3', 'iso-8859-3', 'iso-ir-109', 'iso8859-3', 'iso88593', 'iso_8859-3', 'iso_8859-3:1988', 'l3', 'latin3'],
  'iso-8859-4': ['csisolatin4', 'iso-8859-4', 'iso-ir-110', 'iso8859-4', 'iso88594', 'iso_8859-4', 'iso_8859-4:1988', 'l4', 'latin4'],
  'iso-8859-5': ['csisolatincyrillic', 'cyrillic', 'iso-8859-5', 'iso-ir-144', 'iso8859-5', 'iso88595', 'iso_8859-5', 'iso_8859-5:1988'],
  'iso-8859-6': ['arabic', 'asmo-708', 'csiso88596e', 'csiso88596i', 'csisolatinarabic', 'ecma-114', 'iso-8859-6', 'iso-8859-6-e', 'iso-8859-6-i', 'iso-ir-127', 'iso8859-6', 'iso88596', 'iso_8859-6', 'iso_8859-6:1987'],
  'iso-8859-7': ['csisolatingreek', 'ecma-118', 'elot_928', 'greek', 'greek8', 'iso-8859-7', 'iso-ir-126', 'iso8859-7', 'iso88597', 'iso_8859-7', 'iso_8859-7:1987', 'sun_eu_greek'],
  'iso-8859-8': ['csiso88598e', 'csisolatinhebrew', 'hebrew', 'iso-8859-8', 'iso-8859-8-e', 'iso-ir-138', 'iso8859-8', 'iso88598', 'iso_8859-8', 'iso_8859-8:1988', 'visual', 'iso-8859-8-i', 'csiso88598i', 'logical'],
  'iso-8859-10': ['csisolatin6', 'iso-8859-10', 'iso-ir-157', 'iso8859-10', 'iso885910', 'l6', 'latin6'],
  'iso-8859-13': ['iso-8859-13', 'iso8859-13', 'iso885913'],
  'iso-8859-14': ['iso-8859-14', 'iso8859-14', 'iso885914'],
  'iso-8859-15': ['csisolatin9', 'iso-8859-15', 'iso8859-15', 'iso885915', 'iso_8859-15', 'l9'],
  'iso-8859-16': ['iso-8859-16'],
  'koi8-r': ['cskoi8r', 'koi', 'koi8', 'koi8-r', 'koi8_r'],
  'koi8-u': ['koi8-ru', 'koi8-u'],
  macintosh: ['csmacintosh', 'mac', 'macintosh', 'x-mac-roman'],
  'windows-874': ['dos-874', 'iso-8859-11', 'iso8859-11', 'iso885911', 'tis-620', 'windows-874'],
  'windows-1250': ['cp1250', 'windows-1250', 'x-cp1250'],
  'windows-1251': ['cp1251', 'windows-1251', 'x-cp1251'],
  'windows-1252': ['ansi_x3.4-1968', 'ascii', 'cp1252', 'cp819', 'csisolatin1', 'ibm819', 'iso-8859-1', 'iso-ir-100', 'iso8859-1', 'iso88591', 'iso_8859-1', 'iso_8859-1:1987', 'l1', 'latin1', 'us-ascii', 'windows-1252', 'x-cp1252'],
  'windows-1253': ['cp1253', 'windows-1253', 'x-cp1253'],
  'windows-1254': ['cp1254', 'csisolatin5', 'iso-8859-9', 'iso-ir-148', 'iso8859-9', 'iso88599', 'iso_8859-9', 'iso_8859-9:1989', 'l5', 'latin5', 'windows-1254', 'x-cp1254'],
  'windows-1255': ['cp1255', 'windows-1255', 'x-cp1255'],
  'windows-1256': ['cp1256', 'windows-1256', 'x-cp1256'],
  'windows-1257': ['cp1257', 'windows-1257', 'x-cp1257'],
  'windows-1258': ['cp1258', 'windows-1258', 'x-cp1258'],
  'x-mac-cyrillic': ['x-mac-cyrillic', 'x-mac-ukrainian'],
  gbk: ['chinese', 'csgb2312', 'csiso58gb231280', 'gb2312', 'gb_2312', 'gb_2312-80', 'gbk', 'iso-ir-58', 'x-gbk'],
  gb18030: ['gb18030'],
  big5: ['big5', 'big5-hkscs', 'cn-big5', 'csbig5', 'x-x-big5'],
  'euc-jp': ['cseucpkdfmtjapanese', 'euc-jp', 'x-euc-jp'],
  'iso-2022-jp': ['csiso2022jp', 'iso-2022-jp'],
  // `shift-jis` and `ms932` are not WHATWG labels but occur in the wild.
  shift_jis: ['csshiftjis', 'ms932', 'ms_kanji', 'shift-jis', 'shift_jis', 'sjis', 'windows-31j', 'x-sjis', 'cp932'],
  'euc-kr': ['cseuckr', 'csksc56011987', 'euc-kr', 'iso-ir-149', 'korean', 'ks_c_5601-1987', 'ks_c_5601-1989', 'ksc5601', 'ksc_5601', 'windows-949'],
  'utf-16be': ['unicodefffe', 'utf-16be'],
  'utf-16le': ['csunicode', 'iso-10646-ucs-2', 'ucs-2', 'unicode', 'unicodefeff', 'utf-16', 'utf-16le'],
};

const LABEL_TO_NAME = new Map<string, string>();
for (const [name, labels] of Object.entries(LABELS)) for (const l of labels) LABEL_TO_NAME.set(l, name);

/**
 * iconv-lite codec per canonical name where the plain name would decode a
 * narrower table than browsers do (they use the Microsoft supersets).
 */
const ICONV_CODEC: Record<string, string> = {
  shift_jis: 'cp932',
  'euc-kr': 'cp949',
  big5: 'big5hkscs',
  'x-mac-cyrillic': 'maccyrillic',
};

/** Canonical lower-case name for a label, or null when unknown or not decodable. */
/**
 * Loads iconv-lite's codec tables now (its first look-up loads them all: ~0.1 s of CPU): a
 * process that will decode pages (one serving wds-fetch) calls this at start-up, so its first
 * page does not pay for it.
 */
export function loadCharsets(): void {
  iconv.encodingExists('utf-8');
}

export function normalizeCharset(label: string | undefined | null): string | null {
  if (!label) return null;
  const name = LABEL_TO_NAME.get(label.trim().toLowerCase().replace(/^["']|["']$/g, ''));
  if (!name) return null;
  return iconv.encodingExists(ICONV_CODEC[name] ?? name) ? name : null;
}

/** The charset parameter of a Content-Type header value. */
export function charsetFromContentType(contentType: string | undefined | null): string | null {
  if (!contentType) return null;
  const m = /(?:^|;)\s*charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^;,\s]*))/i.exec(contentType);
  if (!m) return null;
  return (m[1] ?? m[2] ?? m[3] ?? '').trim() || null;
}

/**
 * Charset declared in the first 4 KB of markup. The bytes are read as latin1 so
 * that any ASCII-compatible encoding can be sniffed before it is known.
 */
export function sniffMetaCharset(body: Buffer): string | null {
  const head = body.subarray(0, 4096).toString('latin1');
  const metaRe = /<meta\b([^>]*)>/gi;
  let m: RegExpExecArray | null;
  while ((m = metaRe.exec(head))) {
    const attrs = m[1];
    const direct = /\bcharset\s*=\s*["']?\s*([^"'\s;/>]+)/i.exec(attrs);
    if (direct && !/\bcontent\s*=/i.test(attrs.slice(0, direct.index))) {
      // <meta charset="x"> (not a charset= buried in a content attribute)
      return direct[1];
    }
    if (/\bhttp-equiv\s*=\s*["']?\s*content-type/i.test(attrs)) {
      const content = /\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(attrs);
      const cs = charsetFromContentType(content ? (content[1] ?? content[2] ?? content[3]) : undefined);
      if (cs) return cs;
    }
  }
  return null;
}

function bomCharset(body: Buffer): { charset: string; length: number } | null {
  if (body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return { charset: 'utf-8', length: 3 };
  if (body.length >= 2 && body[0] === 0xff && body[1] === 0xfe) return { charset: 'utf-16le', length: 2 };
  if (body.length >= 2 && body[0] === 0xfe && body[1] === 0xff) return { charset: 'utf-16be', length: 2 };
  return null;
}

function decodeAs(bytes: Buffer, charset: string): string {
  if (charset === 'utf-8') return bytes.toString('utf8');
  // iconv-lite strips a leading BOM itself (stripBOM defaults to true).
  return iconv.decode(bytes, ICONV_CODEC[charset] ?? charset);
}

/**
 * Decode a response body: BOM, then the Content-Type charset, then a <meta>
 * declaration in the first 4 KB, then UTF-8. Unknown labels are skipped (as
 * browsers do), so a bogus header charset still lets the <meta> decide.
 */
export function decodeBody(body: Buffer, contentTypeHeader: string | undefined): DecodedBody {
  const bom = bomCharset(body);
  if (bom) return { text: decodeAs(body.subarray(bom.length), bom.charset), charset: bom.charset };

  let charset = normalizeCharset(charsetFromContentType(contentTypeHeader));
  if (!charset) {
    charset = normalizeCharset(sniffMetaCharset(body));
    // A UTF-16 declaration inside ASCII-readable markup is necessarily wrong.
    if (charset === 'utf-16le' || charset === 'utf-16be') charset = 'utf-8';
  }
  charset ??= 'utf-8';
  let text = decodeAs(body, charset);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { text, charset };
}
