/**
 * Ad and tracker hosts blocked when `blockAds` is on. A request is blocked when its host is one
 * of these domains or a subdomain of one (`securepubads.g.doubleclick.net` matches
 * `doubleclick.net`). Top-level navigations are never blocked: asking to scrape an ad
 * network's own page is a deliberate choice.
 *
 * Curated by hand from the best-known ad servers, ad exchanges, analytics beacons and
 * session-recording services; it is intentionally short (no path rules, no cosmetic rules):
 * the goal is to skip the heaviest third-party requests, not to be a full ad blocker.
 */
export const AD_HOSTS: readonly string[] = [
  // Google ads and analytics
  'doubleclick.net', 'googlesyndication.com', 'googleadservices.com', 'googletagservices.com',
  'googletagmanager.com', 'google-analytics.com', 'adservice.google.com', 'imasdk.googleapis.com',
  'pagead2.googlesyndication.com', 'fundingchoicesmessages.google.com',
  // Exchanges, SSPs, DSPs
  'adnxs.com', 'adsrvr.org', 'amazon-adsystem.com', 'criteo.com', 'criteo.net', 'rubiconproject.com',
  'pubmatic.com', 'openx.net', 'casalemedia.com', 'indexww.com', 'advertising.com', 'adform.net',
  'smartadserver.com', 'yieldmo.com', 'sharethrough.com', 'teads.tv', 'media.net', 'bidswitch.net',
  '33across.com', 'contextweb.com', 'lijit.com', 'sovrn.com', 'spotxchange.com', 'spotx.tv',
  'springserve.com', '3lift.com', 'triplelift.com', 'gumgum.com', 'kargo.com', 'adroll.com',
  'mathtag.com', 'serving-sys.com', 'flashtalking.com', 'innovid.com', 'undertone.com',
  'tribalfusion.com', 'conversantmedia.com', 'yieldlab.net', 'adition.com', 'zedo.com',
  'adcolony.com', 'applovin.com', 'moatads.com', 'doubleverify.com', 'adsafeprotected.com',
  'adfox.ru', 'an.yandex.ru', 'ads.yahoo.com', 'adtechus.com', 'bidr.io', 'rfihub.com',
  // Native / content recommendation
  'taboola.com', 'outbrain.com', 'zemanta.com', 'revcontent.com', 'mgid.com', 'adblade.com',
  // Pop-under and adult ad networks
  'propellerads.com', 'popads.net', 'popcash.net', 'exoclick.com', 'juicyads.com',
  'trafficjunky.net', 'adsterra.com', 'hilltopads.net',
  // Data brokers and identity sync
  'krxd.net', 'bluekai.com', 'exelator.com', 'demdex.net', 'rlcdn.com', 'agkn.com', 'tapad.com',
  'crwdcntrl.net', 'lotame.com', 'everesttech.net', 'omtrdc.net', 'turn.com', 'media6degrees.com',
  // Measurement and analytics beacons
  'scorecardresearch.com', 'quantserve.com', 'imrworldwide.com', 'chartbeat.com', 'chartbeat.net',
  'statcounter.com', 'histats.com', 'mc.yandex.ru', 'bat.bing.com', 'analytics.twitter.com',
  'ads-twitter.com', 'ads.linkedin.com', 'px.ads.linkedin.com', 'snap.licdn.com',
  'connect.facebook.net', 'analytics.tiktok.com', 'ct.pinterest.com', 'sc-static.net',
  'cdn.segment.com', 'api.segment.io', 'api.amplitude.com', 'cdn.amplitude.com', 'api-js.mixpanel.com',
  'cdn.mxpnl.com', 'heapanalytics.com', 'js-agent.newrelic.com', 'nr-data.net',
  // Session recording and heatmaps
  'hotjar.com', 'hotjar.io', 'mouseflow.com', 'fullstory.com', 'crazyegg.com', 'clarity.ms',
  'luckyorange.com', 'inspectlet.com',
  // Share widgets that mostly track
  'addthis.com', 'sharethis.com',
];

const HOSTS = new Set(AD_HOSTS);

/** True when `host` (a URL hostname) is a listed domain or a subdomain of one. */
export function isAdHost(host: string): boolean {
  let h = host.toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  for (;;) {
    if (HOSTS.has(h)) return true;
    const dot = h.indexOf('.');
    if (dot === -1) return false;
    h = h.slice(dot + 1);
  }
}
