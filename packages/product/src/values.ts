import type { ProductPrice, ProductVariant } from './types';

/**
 * Normalising what pages write: prices as numbers or strings in either decimal convention,
 * currencies as ISO codes or symbols, schema.org availability URLs.
 */

/** "1,299.00", "1.299,00", "19,99", "19.99", 19.99 → a number; null when it is none. */
export function parseAmount(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string') return null;
  let s = v.replace(/[\s\u00a0\u202f']/g, '').replace(/[^\d.,-]/g, '');
  if (!/\d/.test(s)) return null;
  const dot = s.lastIndexOf('.');
  const comma = s.lastIndexOf(',');
  if (dot >= 0 && comma >= 0) {
    // The separator written last is the decimal one.
    s = dot > comma ? s.replace(/,/g, '') : s.replace(/\./g, '').replace(',', '.');
  } else if (comma >= 0) {
    // "19,99" is a decimal comma; "1,299" a thousands separator.
    s = /,\d{1,2}$/.test(s) && s.indexOf(',') === comma ? s.replace(',', '.') : s.replace(/,/g, '');
  } else if (dot >= 0 && s.indexOf('.') !== dot) {
    s = s.replace(/\./g, ''); // "1.299.000"
  }
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

const SYMBOLS: Record<string, string> = { '€': 'EUR', '£': 'GBP', '¥': 'JPY', '₹': 'INR', '₩': 'KRW', '₽': 'RUB', '₺': 'TRY', '₪': 'ILS', R$: 'BRL', $: 'USD', 'US$': 'USD', 'C$': 'CAD', 'A$': 'AUD', CHF: 'CHF', zł: 'PLN', kr: 'SEK' };

/** An ISO 4217 code from a code or a symbol; undefined when unknown. */
export function currencyOf(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (/^[A-Za-z]{3}$/.test(t)) return t.toUpperCase();
  return SYMBOLS[t];
}

/** Formatted the same way for every page (en-US conventions, the currency's own decimals). */
export function formatPrice(amount: number, currency?: string): string {
  if (currency) {
    try {
      return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(amount);
    } catch {
      // not a currency Intl knows: fall through
    }
  }
  const n = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(amount);
  return currency ? `${n} ${currency}` : n;
}

export function priceOf(amount: unknown, currency: unknown): ProductPrice | undefined {
  const a = parseAmount(amount);
  if (a === null) return undefined;
  const c = currencyOf(currency);
  return c ? { amount: a, currency: c, formatted: formatPrice(a, c) } : { amount: a, formatted: formatPrice(a) };
}

/** schema.org ItemAvailability values (also as Open Graph's `in stock` / `instock` words). */
const AVAILABILITY: Record<string, [boolean, string]> = {
  instock: [true, 'In stock'],
  limitedavailability: [true, 'Limited availability'],
  onlineonly: [true, 'Online only'],
  instoreonly: [true, 'In store only'],
  presale: [true, 'Pre-sale'],
  preorder: [false, 'Pre-order'],
  backorder: [false, 'Backorder'],
  madetoorder: [true, 'Made to order'],
  outofstock: [false, 'Out of stock'],
  soldout: [false, 'Sold out'],
  discontinued: [false, 'Discontinued'],
  available: [true, 'In stock'],
  availablefororder: [true, 'In stock'],
  pending: [false, 'Pending'],
};

/**
 * Availability is always present (SDK: required). A page that states none gets
 * `{ inStock: false, text: 'Unknown' }`: "in stock" is a claim only the page can make.
 */
export function availabilityOf(v: unknown): ProductVariant['availability'] {
  if (typeof v === 'string' && v.trim()) {
    const key = v.trim().replace(/^https?:\/\/schema\.org\//i, '').replace(/[\s_-]/g, '').toLowerCase();
    const known = AVAILABILITY[key];
    if (known) return { inStock: known[0], text: known[1] };
    return { inStock: false, text: v.trim() };
  }
  return { inStock: false, text: 'Unknown' };
}

/** A trimmed non-empty string, or undefined. */
export function str(v: unknown): string | undefined {
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string') return undefined;
  const t = v.replace(/\s+/g, ' ').trim();
  return t || undefined;
}

/** An absolute http(s) URL against the page's, or undefined. */
export function absUrl(v: unknown, base: string): string | undefined {
  const s = str(v);
  if (!s) return undefined;
  try {
    const u = new URL(s, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}
