/**
 * The page side of the `branding` format: plain JavaScript evaluated in the rendered page (a
 * string, so no bundler helper can leak into it). It reads computed styles only — what the
 * browser resolved from the page's CSS — and returns raw observations; `branding.ts` turns them
 * into the profile on the worker. Elements are visited in document order and every list is
 * bounded, so the same page gives the same observations. Probe elements (a heading, a
 * paragraph, a button) inserted to read the page's default styles are removed before returning.
 */
export const BRANDING_SCRIPT = String.raw`(() => {
  const MAX = 4000;
  const doc = document;
  const root = doc.documentElement;
  const body = doc.body || root;
  const cs = (el) => getComputedStyle(el);
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return false;
    const s = cs(el);
    return s.visibility !== 'hidden' && s.display !== 'none' && Number(s.opacity) > 0.05;
  };
  const abs = (u) => { if (!u || !String(u).trim()) return null; try { const x = new URL(u, doc.baseURI); return /^https?:$/.test(x.protocol) ? x.href : null; } catch (e) { return null; } };
  const firstVisible = (sel) => { for (const el of doc.querySelectorAll(sel)) if (visible(el)) return el; return null; };

  // Custom properties of :root / html / body rules (same-origin sheets; others cannot be read).
  const vars = {};
  for (const sheet of Array.from(doc.styleSheets).slice(0, 50)) {
    let rules;
    try { rules = sheet.cssRules; } catch (e) { continue; }
    for (const rule of Array.from(rules || []).slice(0, 2000)) {
      if (!rule.style || !/^(:root|html|body)$/i.test((rule.selectorText || '').trim())) continue;
      for (let i = 0; i < rule.style.length; i++) {
        const name = rule.style[i];
        if (name.startsWith('--') && !(name in vars)) vars[name] = cs(root).getPropertyValue(name).trim();
      }
    }
  }
  // A custom property's value as a computed colour (it may be "#0af", "hsl(…)", a var of a var).
  const probe = doc.createElement('span');
  probe.style.cssText = 'position:absolute!important;visibility:hidden!important;pointer-events:none!important';
  body.appendChild(probe);
  const colorVars = {};
  for (const [name, value] of Object.entries(vars)) {
    if (!value || value.length > 100) continue;
    probe.style.color = '';
    probe.style.color = value;
    if (!probe.style.color) continue;
    colorVars[name] = cs(probe).color;
  }

  // Probes for the page's default styles of elements it may not have.
  const probes = {};
  for (const tag of ['h1', 'h2', 'h3', 'p', 'code', 'a', 'button', 'input']) {
    const el = doc.createElement(tag);
    if (tag === 'a') el.setAttribute('href', '#');
    el.textContent = tag === 'input' ? '' : 'Ag';
    el.style.cssText = 'position:absolute!important;visibility:hidden!important;left:-9999px!important';
    body.appendChild(el);
    probes[tag] = el;
  }
  const font = (el) => { const s = cs(el); return { family: s.fontFamily, size: s.fontSize, weight: s.fontWeight, lineHeight: s.lineHeight, color: s.color }; };
  const real = (sel, tag) => firstVisible(sel) || probes[tag];

  // Text colours and weights, weighted by the length of text each element holds directly.
  const textColors = [], weights = [];
  let n = 0;
  for (const el of body.querySelectorAll('p, li, span, td, th, dd, dt, small, figcaption, blockquote, label, div, h1, h2, h3, h4, h5, h6, a')) {
    if (++n > MAX) break;
    let own = 0;
    for (const c of el.childNodes) if (c.nodeType === 3) own += c.textContent.trim().length;
    if (!own || !visible(el)) continue;
    const s = cs(el);
    if (el.tagName !== 'A') textColors.push([s.color, own]);
    weights.push([Number(s.fontWeight), own]);
  }

  const linkColors = [];
  n = 0;
  for (const a of body.querySelectorAll('a[href]')) {
    if (++n > MAX) break;
    if (!visible(a) || !a.textContent.trim()) continue;
    const s = cs(a);
    linkColors.push([s.color, a.textContent.trim().length]);
  }

  // Buttons: elements that look like one, with their resolved styles.
  const buttons = [];
  n = 0;
  for (const el of body.querySelectorAll('button, input[type=submit], input[type=button], a[role=button], [role=button], a[class*=btn], a[class*=button], a[class*=Button], a[class*=cta]')) {
    if (++n > 400) break;
    if (!visible(el)) continue;
    const s = cs(el);
    const r = el.getBoundingClientRect();
    buttons.push({ background: s.backgroundColor, color: s.color, borderColor: s.borderTopColor, borderWidth: s.borderTopWidth, radius: s.borderTopLeftRadius, padding: [s.paddingTop, s.paddingRight, s.paddingBottom, s.paddingLeft], area: Math.round(r.width * r.height), cls: String(el.className || ''), transition: [s.transitionDuration, s.transitionTimingFunction] });
  }

  const inputEl = real('input[type=text], input[type=email], input[type=search], input:not([type]), textarea', 'input');
  const inputStyle = () => { const s = cs(inputEl); return { background: s.backgroundColor, color: s.color, borderColor: s.borderTopColor, borderWidth: s.borderTopWidth, radius: s.borderTopLeftRadius, padding: [s.paddingTop, s.paddingRight, s.paddingBottom, s.paddingLeft] }; };
  const input = inputStyle();
  let focusBorder = null;
  try { inputEl.focus({ preventScroll: true }); focusBorder = cs(inputEl).borderTopColor; inputEl.blur(); } catch (e) {}

  // State colours: elements whose class names say so.
  const states = {};
  for (const [key, re] of [['success', /(^|[-_ ])(success|ok|positive)([-_ ]|$)/i], ['warning', /(^|[-_ ])(warning|warn|caution)([-_ ]|$)/i], ['error', /(^|[-_ ])(error|danger|invalid|negative)([-_ ]|$)/i]]) {
    n = 0;
    for (const el of body.querySelectorAll('[class]')) {
      if (++n > MAX) break;
      if (!re.test(String(el.className))) continue;
      const s = cs(el);
      states[key] = { background: s.backgroundColor, color: s.color, border: s.borderTopColor, borderWidth: s.borderTopWidth };
      break;
    }
  }

  // Spacing: paddings and margins of visible block elements.
  const spacing = [], radii = [];
  n = 0;
  for (const el of body.querySelectorAll('div, section, article, header, footer, nav, main, p, ul, li, button, a, input, h1, h2, h3')) {
    if (++n > MAX) break;
    if (!visible(el)) continue;
    const s = cs(el);
    for (const v of [s.paddingTop, s.paddingLeft, s.marginBottom, s.marginTop, s.rowGap, s.columnGap]) { const x = parseFloat(v); if (x > 0 && x <= 96) spacing.push(x); }
    const r = parseFloat(s.borderTopLeftRadius);
    if (r > 0 && r < 1000) radii.push(s.borderTopLeftRadius);
  }

  // Logo: an image or svg in the header / a home link, or one named so.
  let logo = null;
  const header = doc.querySelector('header, [role=banner], nav') || body;
  for (const img of header.querySelectorAll('img, svg, [style*=background-image]')) {
    if (!visible(img)) continue;
    const hint = ((img.getAttribute('class') || '') + ' ' + (img.id || '') + ' ' + (img.getAttribute('alt') || '') + ' ' + (img.getAttribute('src') || '') + ' ' + ((img.closest('a') || {}).className || '')).toLowerCase();
    const home = img.closest('a[href]') && /^(\/|\.\/|#)?$|^\/(index\.\w+)?$/.test(img.closest('a[href]').getAttribute('href').replace(location.origin, ''));
    if (!/logo|brand/.test(hint) && !home) continue;
    if (img.tagName.toLowerCase() === 'img') logo = abs(img.currentSrc || img.getAttribute('src'));
    else if (img.tagName.toLowerCase() === 'svg') logo = 'data:image/svg+xml;utf8,' + encodeURIComponent(new XMLSerializer().serializeToString(img));
    else { const m = /url\(["']?([^"')]+)/.exec(cs(img).backgroundImage); logo = m ? abs(m[1]) : null; }
    if (logo) break;
  }
  const meta = (sel) => { const el = doc.querySelector(sel); return el ? el.getAttribute('content') : null; };
  const iconEl = doc.querySelector('link[rel~="icon"], link[rel="shortcut icon"], link[rel="apple-touch-icon"]');
  const icons = { svg: body.querySelectorAll('svg').length, font: body.querySelectorAll('i[class*="fa-"], .material-icons, .material-symbols-outlined, [class*="icon-"]').length, img: body.querySelectorAll('img[src*="icon"]').length };
  const firstSvg = firstVisible('svg');

  const headerEl = firstVisible('header, [role=banner]');
  const footerEl = firstVisible('footer, [role=contentinfo]');
  let maxWidth = null;
  n = 0;
  for (const el of body.querySelectorAll('main, .container, [class*=container], [class*=wrapper], section, div')) {
    if (++n > 500) break;
    const mw = cs(el).maxWidth;
    if (mw && mw !== 'none' && /px$/.test(mw) && visible(el)) { maxWidth = mw; break; }
  }
  let columns = null;
  const grid = firstVisible('[style*="grid"], [class*=grid], main, section');
  if (grid) { const t = cs(grid).gridTemplateColumns; if (t && t !== 'none') columns = t.split(' ').length; }

  const out = {
    url: location.href,
    title: doc.title,
    siteName: meta('meta[property="og:site_name"]') || meta('meta[name="application-name"]'),
    colorSchemeMeta: meta('meta[name="color-scheme"]') || cs(root).colorScheme,
    themeColor: meta('meta[name="theme-color"]'),
    background: [cs(body).backgroundColor, cs(root).backgroundColor],
    bodyFont: font(body), pFont: font(real('main p, article p, p', 'p')),
    h1: font(real('h1', 'h1')), h2: font(real('h2', 'h2')), h3: font(real('h3', 'h3')), code: font(real('code, pre, kbd', 'code')),
    link: font(probes.a),
    textColors, weights, linkColors, buttons, input, focusBorder, states, colorVars, spacing, radii,
    logo, favicon: iconEl ? abs(iconEl.getAttribute('href')) : null, ogImage: abs(meta('meta[property="og:image"]') || meta('meta[name="twitter:image"]') || ''),
    icons, iconColor: firstSvg ? cs(firstSvg).color : null,
    headerHeight: headerEl ? Math.round(headerEl.getBoundingClientRect().height) : null,
    footerHeight: footerEl ? Math.round(footerEl.getBoundingClientRect().height) : null,
    maxWidth, columns,
  };
  for (const el of Object.values(probes)) el.remove();
  probe.remove();
  return out;
})()`;
