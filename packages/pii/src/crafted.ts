/**
 * Inputs built to make a backtracking or quadratic detector blow up: long runs of what each
 * detector starts on and never completes. Used by the linear-time test and linear.bench.ts.
 */
export const CRAFTED: Record<string, (n: number) => string> = {
  'at-signs': (n) => 'a@'.repeat(n / 2),
  'local-part': (n) => `${'a.'.repeat(n / 2)}@`,
  'digit-groups': (n) => '1 '.repeat(n / 2),
  'dashed-digits': (n) => '12-'.repeat(n / 3),
  'plus-parens': (n) => '+(1 '.repeat(n / 4),
  'long-number': (n) => '9'.repeat(n),
  'iban-starts': (n) => 'DE89 '.repeat(n / 5),
  'pem-headers': (n) => '-----BEGIN RSA PRIVATE KEY-----\n'.repeat(n / 32),
  'password-labels': (n) => 'password: '.repeat(n / 10),
  'jwt-starts': (n) => 'eyJ.'.repeat(n / 4),
  colons: (n) => ':'.repeat(n),
  'hex-colons': (n) => 'ab:'.repeat(n / 3),
  titles: (n) => 'Mr. '.repeat(n / 4),
  'capitalised-words': (n) => 'Anna '.repeat(n / 5),
  'hyphenated-names': (n) => 'Karl-'.repeat(n / 5),
  'street-numbers': (n) => '12 rue '.repeat(n / 7),
  'urls': (n) => 'http://'.repeat(n / 7),
  'markdown-links': (n) => '](('.repeat(n / 3),
  'no-newlines-text': (n) => 'word '.repeat(n / 5),
};
