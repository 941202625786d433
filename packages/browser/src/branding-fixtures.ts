/**
 * Pages with known styles for the branding tests (written for them). Fonts are families the
 * machine may not have: computed styles report the declared family either way.
 */
export const BRAND_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Acme Rockets</title>
<meta property="og:site_name" content="Acme Rockets"><meta property="og:image" content="/og.png">
<link rel="icon" href="/favicon.svg">
<style>
:root { --color-primary: #ff5a1f; --color-accent: #7c3aed; --color-success: #059669; }
body { margin: 0; background: #fafaf9; color: #1c1917; font-family: "Inter", Arial, sans-serif; font-size: 16px; line-height: 24px; font-weight: 400; }
header { height: 64px; display: flex; align-items: center; padding: 0 16px; }
h1, h2, h3 { font-family: "Space Grotesk", Georgia, serif; font-weight: 700; line-height: 1.2; color: #0c0a09; }
h1 { font-size: 48px; } h2 { font-size: 32px; } h3 { font-size: 24px; }
p { margin: 0 0 16px; }
.muted { color: #78716c; }
a { color: #2563eb; transition: color 150ms ease-in-out; }
code { font-family: "JetBrains Mono", monospace; }
main { max-width: 1120px; margin: 0 auto; padding: 32px 16px; }
.btn { display: inline-block; padding: 12px 24px; border-radius: 8px; text-decoration: none; transition: background-color 200ms ease; }
.btn-primary { background: #ff5a1f; color: #ffffff; border: 0; }
.btn-secondary { background: transparent; color: #ff5a1f; border: 2px solid #ff5a1f; }
input { background: #ffffff; color: #1c1917; border: 1px solid #d6d3d1; border-radius: 6px; padding: 8px 12px; }
input:focus { border-color: #ff5a1f; outline: none; }
.alert-error { background: #fee2e2; color: #b91c1c; padding: 8px; }
footer { height: 120px; }
</style></head><body>
<header><a href="/"><img class="logo" src="/logo.png" alt="Acme Rockets" width="120" height="32"></a></header>
<main>
<h1>Rockets for everyone</h1>
<p>Acme builds small rockets for hobbyists, schools and research groups around the world.</p>
<p class="muted">Free shipping on orders over one hundred dollars, always.</p>
<h2>Why Acme</h2><h3>Safety first</h3>
<p>Read the <a href="/docs">documentation</a> and the <a href="/faq">frequently asked questions</a>.</p>
<p><a class="btn btn-primary" href="/buy">Buy a rocket</a> <a class="btn btn-secondary" href="/demo">Book a demo</a></p>
<form><input type="email" placeholder="you@example.com"></form>
<div class="alert-error">Launch window closed.</div>
<p>Install with <code>npm i acme</code>.</p>
</main><footer><p>© Acme</p></footer></body></html>`;

/** A page with no styles of its own: every colour comes from the browser's defaults. */
export const BARE_PAGE = '<!doctype html><html><head><title>Bare</title></head><body><h1>Plain</h1><p>Nothing styled here, just text with a <a href="/x">link</a>.</p></body></html>';

/** A dark page: the scheme follows the background. */
export const DARK_PAGE = `<!doctype html><html><head><title>Night</title><style>body{background:#0b1020;color:#e5e7eb;font-family:Helvetica,sans-serif}a{color:#38bdf8}</style></head>
<body><p>Dark mode by default, with a <a href="/more">link</a>.</p></body></html>`;
