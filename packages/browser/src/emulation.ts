/** Device profiles, user agents and the country → timezone map used to set up a context. */
import { acceptLanguage } from '@wds/fetch';

export const DESKTOP_VIEWPORT = { width: 1920, height: 1080 } as const;

/** A Pixel 7 class phone (what Chrome DevTools' device list gives for it). */
export const MOBILE_DEVICE = {
  viewport: { width: 412, height: 839 },
  screen: { width: 412, height: 915 },
  deviceScaleFactor: 2.625,
  isMobile: true,
  hasTouch: true,
} as const;

/**
 * User agents in Chrome's reduced-UA format, built from the running browser's major version
 * (so the UA matches the engine's real feature set). Headless Chromium would otherwise announce
 * itself as `HeadlessChrome`, which many sites refuse.
 */
export function userAgents(browserVersion: string): { desktop: string; mobile: string } {
  const major = /^(\d+)/.exec(browserVersion)?.[1] ?? '120';
  return {
    desktop: `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`,
    mobile: `Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Mobile Safari/537.36`,
  };
}

/** One representative IANA zone per country (the most populous zone for multi-zone countries). */
export const COUNTRY_TIMEZONE: Readonly<Record<string, string>> = {
  US: 'America/New_York', CA: 'America/Toronto', MX: 'America/Mexico_City', BR: 'America/Sao_Paulo',
  AR: 'America/Argentina/Buenos_Aires', CL: 'America/Santiago', CO: 'America/Bogota', PE: 'America/Lima',
  GB: 'Europe/London', IE: 'Europe/Dublin', PT: 'Europe/Lisbon', ES: 'Europe/Madrid', FR: 'Europe/Paris',
  BE: 'Europe/Brussels', NL: 'Europe/Amsterdam', DE: 'Europe/Berlin', AT: 'Europe/Vienna', CH: 'Europe/Zurich',
  IT: 'Europe/Rome', DK: 'Europe/Copenhagen', NO: 'Europe/Oslo', SE: 'Europe/Stockholm', FI: 'Europe/Helsinki',
  PL: 'Europe/Warsaw', CZ: 'Europe/Prague', HU: 'Europe/Budapest', RO: 'Europe/Bucharest', GR: 'Europe/Athens',
  TR: 'Europe/Istanbul', UA: 'Europe/Kyiv', RU: 'Europe/Moscow', IL: 'Asia/Jerusalem', EG: 'Africa/Cairo',
  SA: 'Asia/Riyadh', AE: 'Asia/Dubai', IR: 'Asia/Tehran', PK: 'Asia/Karachi', IN: 'Asia/Kolkata',
  BD: 'Asia/Dhaka', TH: 'Asia/Bangkok', VN: 'Asia/Ho_Chi_Minh', MY: 'Asia/Kuala_Lumpur', SG: 'Asia/Singapore',
  ID: 'Asia/Jakarta', PH: 'Asia/Manila', CN: 'Asia/Shanghai', HK: 'Asia/Hong_Kong', TW: 'Asia/Taipei',
  KR: 'Asia/Seoul', JP: 'Asia/Tokyo', AU: 'Australia/Sydney', NZ: 'Pacific/Auckland', ZA: 'Africa/Johannesburg',
  NG: 'Africa/Lagos', KE: 'Africa/Nairobi',
};

export interface LocaleSettings {
  /** BCP 47 tag for navigator.language and Intl (first language). */
  locale: string;
  timezoneId: string;
  acceptLanguage: string;
  /** The header's languages without q-values, in order. */
  languages: string[];
}

/** Locale, timezone and Accept-Language for a location; the spec's default location is US. */
export function localeSettings(location: { country?: string; languages?: string[] } | undefined): LocaleSettings {
  const country = (location?.country ?? 'US').toUpperCase();
  const header = acceptLanguage({ country, languages: location?.languages });
  const first = header.split(',')[0]!.split(';')[0]!.trim();
  let locale = 'en-US';
  try {
    locale = Intl.getCanonicalLocales(first)[0] ?? locale;
  } catch {
    // Not a well-formed tag: keep the header as given, but do not hand it to ICU.
  }
  const languages = header.split(',').map((l) => l.split(';')[0]!.trim());
  return { locale, timezoneId: COUNTRY_TIMEZONE[country] ?? 'UTC', acceptLanguage: header, languages };
}
