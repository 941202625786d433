import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { chromium, type BrowserContextOptions } from 'playwright-core';
import { DEFAULT_LAUNCH_ARGS } from '/work/main/packages/scraper/src/browser/pool.ts';
import { COOKIE_BANNER_INIT_SCRIPT } from '/work/main/packages/scraper/src/browser/consent.ts';
const PAGE = `<!doctype html><html><head><title>x</title></head><body><main><h1>A static article</h1>${'<p>Lorem ipsum dolor sit amet.</p>'.repeat(30)}</main></body></html>`;
const server = http.createServer((_q, r) => { r.writeHead(200, {'content-type':'text/html'}); r.end(PAGE); });
await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as any).port}/`;
function childCpu(): number { let total = 0; const me = process.pid; const par = new Map<number, number>(); const cpu = new Map<number, number>();
  for (const d of readdirSync('/proc')) { if (!/^\d+$/.test(d)) continue; try { const s = readFileSync(`/proc/${d}/stat`, 'utf8'); const f = s.slice(s.lastIndexOf(')') + 2).split(' '); par.set(+d, +f[1]); cpu.set(+d, +f[11] + +f[12] + +f[13] + +f[14]); } catch {} }
  for (const [pid, c] of cpu) { let p = par.get(pid); let hops = 0; while (p && p > 1 && hops++ < 50) { if (p === me) { total += c; break; } p = par.get(p); } } return total / 100; }
async function load(n: number, c: number, one: () => Promise<void>) { let next = 0; const t0 = performance.now(); await Promise.all(Array.from({length: c}, async () => { while (next < n) { next++; await one(); } })); return n / ((performance.now() - t0) / 1000); }
const args = [...DEFAULT_LAUNCH_ARGS, ...(process.env.EXTRA_ARGS ? process.env.EXTRA_ARGS.split(' ') : [])];
const b = await chromium.launch({ executablePath: process.env.EXE ?? '/usr/lib/chromium/chromium-headless-shell', headless: true, args });
function mk(opts: BrowserContextOptions, f: { init?: string; route?: boolean; listen?: boolean; probe?: boolean; headers?: boolean }) {
  return async () => { const c = await b.newContext(opts); const setup: Promise<unknown>[] = []; if (f.init) setup.push(c.addInitScript({content: f.init})); if (f.route) setup.push(c.route(() => true, r => r.continue())); await Promise.all(setup);
    if (f.listen) { c.on('request', () => {}); c.on('requestfinished', () => {}); c.on('requestfailed', () => {}); }
    const p = await c.newPage(); if (f.listen) p.on('response', () => {});
    const r = await p.goto(url, {waitUntil:'load'}); if (f.probe) await p.evaluate(() => 1); await p.content(); if (f.headers) await r!.allHeaders(); await c.close(); };
}
const full: BrowserContextOptions = { viewport: {width:1920,height:1080}, userAgent:'Mozilla/5.0 X', locale:'en-US', timezoneId:'America/New_York', extraHTTPHeaders:{'Accept-Language':'en-US,en;q=0.9'}, serviceWorkers:'block', acceptDownloads:false };
const V: Record<string, () => Promise<void>> = {
  bare: mk({}, {}),
  vp1920: mk({viewport:{width:1920,height:1080}}, {}),
  emul: mk({ ...full, viewport: undefined }, {}),
  init: mk({}, {init: 'void 0'}),
  initCss: mk({}, {init: COOKIE_BANNER_INIT_SCRIPT}),
  route: mk({}, {route: true}),
  listen: mk({}, {listen: true}),
  probeHeaders: mk({}, {probe: true, headers: true}),
  all: mk(full, {init: COOKIE_BANNER_INIT_SCRIPT, route: true, listen: true, probe: true, headers: true}),
};
const only = process.argv.slice(2);
for (const f of Object.values(V)) await load(8, 4, f);
const res: Record<string, number[]> = {};
for (let round = 0; round < 3; round++) for (const [k, f] of Object.entries(V)) { if (only.length && !only.includes(k)) continue;
  const u0 = process.cpuUsage(); const c0 = childCpu(); await load(40, 4, f); const u = process.cpuUsage(u0); const c1 = childCpu();
  (res[k] ??= []).push(((u.user + u.system) / 1000 + (c1 - c0) * 1000) / 40); }
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(14), 'cpu ms/page', v.map(x => x.toFixed(0)).join(' '), ' min', Math.min(...v).toFixed(0));
await b.close(); server.close();
