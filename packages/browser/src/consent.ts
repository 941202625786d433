/**
 * Cookie-consent banners hidden when `blockAds` is on. The rules are applied as a constructed
 * style sheet adopted by every document (see COOKIE_BANNER_INIT_SCRIPT): constructed sheets are
 * not subject to the page's CSP `style-src`, and they do not appear in `page.content()`, so the
 * returned HTML is exactly the page's own DOM. Hiding is visual only (screenshots, clickability):
 * the banner's markup stays in the HTML, where the HTML cleaner deals with it.
 */
export const COOKIE_BANNER_SELECTORS: readonly string[] = [
  // OneTrust
  '#onetrust-consent-sdk', '#onetrust-banner-sdk', '.onetrust-pc-dark-filter', '#ot-sdk-btn-floating',
  // Cookiebot
  '#CybotCookiebotDialog', '#CybotCookiebotDialogBodyUnderlay', '#cookiebanner',
  // Quantcast Choice
  '#qc-cmp2-container', '.qc-cmp2-container', '.qc-cmp-ui-container',
  // TrustArc / TRUSTe
  '#truste-consent-track', '#consent_blackbar', '.truste_overlay', '.truste_box_overlay', '#trustarc-banner-overlay',
  // Didomi, Usercentrics, Sourcepoint, Google Funding Choices, consentmanager, iubenda, Osano
  '#didomi-host', '#didomi-popup', '.didomi-popup-container', '#usercentrics-root', '#usercentrics-cmp-ui',
  '[id^="sp_message_container"]', '.fc-consent-root', '#cmpbox', '#cmpbox2', '#cmpwrapper',
  '#iubenda-cs-banner', '.osano-cm-window', '.osano-cm-dialog',
  // Cookie Consent (Osano open source), CookieYes, Complianz, Borlabs, Klaro, Axeptio, tarteaucitron
  '.cc-window', '.cc-banner', '.cc-revoke', '#cookie-law-info-bar', '.cky-consent-container', '.cky-overlay',
  '#cmplz-cookiebanner-container', '.cmplz-cookiebanner', '#BorlabsCookieBox', '.klaro .cookie-notice',
  '#axeptio_overlay', '#tarteaucitronRoot', '#cookiescript_injected', '.cookiefirst-root',
  '#hs-eu-cookie-confirmation', '#moove_gdpr_cookie_info_bar', '#termly-code-snippet-support',
  '#_evidon_banner', '.evidon-banner', '#gdpr-consent-tool-wrapper',
  // Generic names used by hand-rolled banners
  '#cookie-banner', '.cookie-banner', '#cookie-notice', '.cookie-notice', '#cookie-consent',
  '.cookie-consent', '#cookieConsent', '#cookie-bar', '.cookie-bar', '#gdpr-cookie-notice',
  '#gdpr-banner', '.gdpr-banner', '[aria-label="cookieconsent"]',
];

/** Classes some consent managers put on <html>/<body> to block scrolling while open. */
const SCROLL_LOCKS = ['html.sp-message-open', 'body.didomi-popup-open', 'body.qc-cmp-ui-showing', 'body.truste-body-noscroll'];

export const COOKIE_BANNER_CSS =
  `${COOKIE_BANNER_SELECTORS.join(',\n')} { display: none !important; visibility: hidden !important; }\n` +
  `${SCROLL_LOCKS.join(', ')} { overflow: auto !important; }\n`;

/** Init script (runs before any page script in every frame) adopting the hiding sheet. */
export const COOKIE_BANNER_INIT_SCRIPT = `(() => {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(${JSON.stringify(COOKIE_BANNER_CSS)});
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  } catch (e) {}
})();`;
