/**
 * Domain matching for `domainTools`: a capability declares registrable hosts (`example.com`);
 * a page matches when its host is one of them or a subdomain of one. Comparison is on lower-case
 * ASCII hosts (URL's punycode form) without a trailing dot; ports and schemes do not matter.
 */

/** `Example.COM.`, `*.example.com`, `https://example.com/x` → `example.com`; null when it is not a host. */
export function normalizeDomain(raw: string): string | null {
  let s = raw.trim().toLowerCase();
  if (s.startsWith('*.')) s = s.slice(2);
  try {
    const host = new URL(s.includes('://') ? s : `http://${s}`).hostname.replace(/\.$/, '');
    return /^[a-z0-9.-]+$/.test(host) && host.includes('.') && !host.startsWith('.') ? host : null;
  } catch {
    return null;
  }
}

/** The host of `url` and every parent domain with at least two labels (`a.b.example.com` → itself, `b.example.com`, `example.com`). */
export function hostCandidates(url: string): string[] {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return [];
  }
  if (!host.includes('.') || /^[0-9.]+$/.test(host) || host.startsWith('[')) return host ? [host] : [];
  const labels = host.split('.');
  const out: string[] = [];
  for (let i = 0; i <= labels.length - 2; i++) out.push(labels.slice(i).join('.'));
  return out;
}

export function matchesDomain(url: string, domains: readonly string[]): boolean {
  const c = hostCandidates(url);
  return domains.some((d) => c.includes(d));
}

/** http(s) URLs written in free text (a search query naming a site). */
export function urlsInText(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/\bhttps?:\/\/[^\s<>"')]+/gi)) out.add(m[0]);
  for (const m of text.matchAll(/(?:^|\s)((?:[a-z0-9-]+\.)+[a-z]{2,})(?=\/|\s|$)/gi)) out.add(`https://${m[1]}`);
  return [...out];
}
