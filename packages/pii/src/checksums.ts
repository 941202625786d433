/**
 * Check digits and format rules of the structured identifiers. Each takes the identifier in
 * compact form (separators removed, letters upper case) and runs in time linear in its length.
 */

const code = (c: string) => c.charCodeAt(0);
const digitsOf = (s: string) => Array.from(s, (c) => code(c) - 48);

/** Luhn (ISO/IEC 7812): payment cards. */
export function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = code(digits[i]!) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * Issuer prefixes of the card networks (IIN ranges) and the lengths each issues: a Luhn-valid
 * number outside them (an EAN, a long order number) is not taken for a card.
 */
export function cardNetwork(d: string): string | null {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p3 = Number(d.slice(0, 3));
  const p4 = Number(d.slice(0, 4));
  const p6 = Number(d.slice(0, 6));
  if (d[0] === '4' && (n === 13 || n === 16 || n === 19)) return 'visa';
  if (((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) && n === 16) return 'mastercard';
  if ((p2 === 34 || p2 === 37) && n === 15) return 'amex';
  if ((p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649) || (p6 >= 622126 && p6 <= 622925)) && n >= 16 && n <= 19) return 'discover';
  if (p4 >= 3528 && p4 <= 3589 && n >= 16 && n <= 19) return 'jcb';
  if (((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38 || p2 === 39) && n >= 14 && n <= 19) return 'diners';
  if (p2 === 62 && n >= 16 && n <= 19) return 'unionpay';
  if ((p2 === 50 || (p2 >= 56 && p2 <= 69)) && n >= 12 && n <= 19) return 'maestro';
  return null;
}

/** IBAN lengths by country (SWIFT IBAN registry). */
const IBAN_LENGTH: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28, CH: 21, CR: 22, CY: 28,
  CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FK: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23,
  GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32,
  LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MN: 20, MR: 27, MT: 31, MU: 30, NI: 28, NL: 18,
  NO: 15, OM: 23, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24, SC: 31, SD: 18, SE: 24, SI: 19,
  SK: 24, SM: 27, SO: 23, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20, YE: 30,
};

export const ibanLength = (country: string): number | undefined => IBAN_LENGTH[country];

/** IBAN (ISO 13616): the country's length and the mod-97 check, computed digit by digit. */
export function ibanValid(iban: string): boolean {
  if (ibanLength(iban.slice(0, 2)) !== iban.length) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let rem = 0;
  for (const c of moved) {
    const v = c >= '0' && c <= '9' ? code(c) - 48 : c >= 'A' && c <= 'Z' ? code(c) - 55 : -1;
    if (v < 0) return false;
    rem = v >= 10 ? (rem * 100 + v) % 97 : (rem * 10 + v) % 97;
  }
  return rem === 1;
}

/** US SSN (SSA rules): no area 000, 666 or 9xx, no group 00, no serial 0000. */
export function ssnValid(d: string): boolean {
  if (!/^\d{9}$/.test(d)) return false;
  const area = d.slice(0, 3);
  return area !== '000' && area !== '666' && d[0] !== '9' && d.slice(3, 5) !== '00' && d.slice(5) !== '0000';
}

/** UK National Insurance number (HMRC): prefix letters and suffix rules; there is no check digit. */
export function ninoValid(s: string): boolean {
  if (!/^[A-Z]{2}\d{6}[A-D]$/.test(s)) return false;
  const [a, b] = [s[0]!, s[1]!];
  if ('DFIQUV'.includes(a) || 'DFIOQUV'.includes(b)) return false;
  return !['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ'].includes(a + b);
}

/**
 * German tax id (Steuerliche Identifikationsnummer): 11 digits, no leading zero, in the first ten
 * exactly one digit occurs twice or three times, check digit by ISO 7064 MOD 11,10.
 */
export function steuerIdValid(d: string): boolean {
  if (!/^[1-9]\d{10}$/.test(d)) return false;
  const counts = new Array<number>(10).fill(0);
  for (const c of d.slice(0, 10)) counts[code(c) - 48]!++;
  const repeated = counts.filter((n) => n >= 2);
  if (repeated.length !== 1 || repeated[0]! > 3) return false;
  let product = 10;
  for (const x of digitsOf(d.slice(0, 10))) {
    let sum = (x + product) % 10;
    if (sum === 0) sum = 10;
    product = (sum * 2) % 11;
  }
  const check = (11 - product) % 10;
  return check === code(d[10]!) - 48;
}

/** Dutch BSN: 9 digits passing the "11-proef" (weights 9…2 and −1). */
export function bsnValid(d: string): boolean {
  if (!/^\d{9}$/.test(d) || /^0+$/.test(d)) return false;
  const x = digitsOf(d);
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += x[i]! * (9 - i);
  sum -= x[8]!;
  return sum % 11 === 0;
}

/** Brazilian CPF: two mod-11 check digits; all-equal numbers are invalid. */
export function cpfValid(d: string): boolean {
  if (!/^\d{11}$/.test(d) || /^(\d)\1{10}$/.test(d)) return false;
  const x = digitsOf(d);
  const check = (n: number) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += x[i]! * (n + 1 - i);
    const r = (sum * 10) % 11;
    return r === 10 ? 0 : r;
  };
  return check(9) === x[9] && check(10) === x[10];
}

/**
 * French NIR (numéro de sécurité sociale): sex 1/2, year, month (01–12, or 20–99 for unknown
 * or provisional ones), department (Corsica 2A/2B), commune, order, then key = 97 − (NIR mod 97).
 */
export function nirValid(s: string): boolean {
  if (!/^[12]\d{4}(?:\d{2}|2A|2B)\d{8}$/.test(s)) return false;
  const month = Number(s.slice(3, 5));
  if (!((month >= 1 && month <= 12) || month >= 20)) return false;
  let body = s.slice(0, 13);
  if (body.includes('2A')) body = String(BigInt(body.replace('2A', '19')) - 1000000n);
  else if (body.includes('2B')) body = String(BigInt(body.replace('2B', '18')) - 2000000n);
  let rem = 0;
  for (const c of body) rem = (rem * 10 + code(c) - 48) % 97;
  return 97 - rem === Number(s.slice(13));
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

/** Spanish DNI (8 digits + letter) and NIE (X/Y/Z + 7 digits + letter): the letter is the number mod 23. */
export function dniValid(s: string): boolean {
  const m = /^([XYZ]?)(\d{7,8})([A-Z])$/.exec(s);
  if (!m) return false;
  const [, prefix, num, letter] = m;
  if (prefix ? num!.length !== 7 : num!.length !== 8) return false;
  const n = Number(prefix ? String('XYZ'.indexOf(prefix)) + num : num);
  return DNI_LETTERS[n % 23] === letter;
}

// Codice fiscale: values of letters and digits in odd (1st, 3rd, …) positions; even positions count 0–9 / A=0…Z=25.
// Omocodia letters standing for digits are valued as the letters they are.
const CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];

/** Italian codice fiscale: 16 characters (digits may be replaced by LMNPQRSTUV), last one a check letter. */
export function codiceFiscaleValid(s: string): boolean {
  if (!/^[A-Z]{6}[\dLMNPQRSTUV]{2}[ABCDEHLMPRST][\dLMNPQRSTUV]{2}[A-Z][\dLMNPQRSTUV]{3}[A-Z]$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const c = s[i]!;
    const isDigit = c >= '0' && c <= '9';
    if (i % 2 === 0) sum += isDigit ? CF_ODD[code(c) - 48]! : CF_ODD[code(c) - 65]!;
    else sum += isDigit ? code(c) - 48 : code(c) - 65;
  }
  return String.fromCharCode(65 + (sum % 26)) === s[15];
}

/** ISBN-13 (978/979 prefix, weights 1 and 3) — recognised so it is never taken for something else. */
export function isbn13Valid(d: string): boolean {
  if (!/^97[89]\d{10}$/.test(d)) return false;
  const x = digitsOf(d);
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += x[i]! * (i % 2 ? 3 : 1);
  return sum % 10 === 0;
}

/** ISBN-10 (weights 10…1, X = 10). */
export function isbn10Valid(s: string): boolean {
  if (!/^\d{9}[\dX]$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (s[i] === 'X' ? 10 : code(s[i]!) - 48) * (10 - i);
  return sum % 11 === 0;
}
