/** Default language per country, for Accept-Language when only `location.country` is given. */
const COUNTRY_LANG: Record<string, string> = {
  US: 'en-US', GB: 'en-GB', AU: 'en-AU', CA: 'en-CA', IE: 'en-IE', NZ: 'en-NZ', IN: 'en-IN',
  DE: 'de-DE', AT: 'de-AT', CH: 'de-CH', FR: 'fr-FR', BE: 'fr-BE', ES: 'es-ES', MX: 'es-MX',
  AR: 'es-AR', IT: 'it-IT', PT: 'pt-PT', BR: 'pt-BR', NL: 'nl-NL', SE: 'sv-SE', NO: 'nb-NO',
  DK: 'da-DK', FI: 'fi-FI', PL: 'pl-PL', CZ: 'cs-CZ', RU: 'ru-RU', UA: 'uk-UA', TR: 'tr-TR',
  JP: 'ja-JP', KR: 'ko-KR', CN: 'zh-CN', TW: 'zh-TW', HK: 'zh-HK', IL: 'he-IL', SA: 'ar-SA',
  AE: 'ar-AE', EG: 'ar-EG', IR: 'fa-IR', TH: 'th-TH', VN: 'vi-VN', ID: 'id-ID', MY: 'ms-MY',
  GR: 'el-GR', RO: 'ro-RO', HU: 'hu-HU',
};

/** The Accept-Language value for a location, languages in the caller's priority order. */
export function acceptLanguage(location: { country?: string; languages?: string[] }): string {
  const langs = location.languages?.length
    ? location.languages
    : [COUNTRY_LANG[location.country ?? 'US'] ?? `en-${location.country ?? 'US'}`];
  const expanded: string[] = [];
  for (const l of langs) {
    if (!expanded.includes(l)) expanded.push(l);
    const base = l.split('-')[0]!;
    if (base !== l && !langs.includes(base) && !expanded.includes(base)) expanded.push(base);
  }
  return expanded.map((l, i) => (i === 0 ? l : `${l};q=${Math.max(0.1, 1 - i * 0.1).toFixed(1)}`)).join(',');
}
