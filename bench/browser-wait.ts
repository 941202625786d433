/**
 * Issue 39.3: a script-rendered page with `waitFor: 1000`, rendered by `BrowserPool` against a
 * bare playwright-core page doing the same (fresh context, goto until `load`, wait 1,000 ms,
 * content()), on the same Chromium, one render at a time so the figure is the page's latency and
 * not the queue's. CPU is this process and all its children (both browsers, the site server)
 * between the start and the end of each mode's round: the other mode's browser idles meanwhile.
 * Rounds interleave the two modes so the host's drift hits both alike.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { BrowserPool, DEFAULT_LAUNCH_ARGS } from '@wds/browser';
import { sitePages } from './site-pages';
import { cpuByPid, cpuUsedBetween, percentile } from './stats';

export interface BrowserWaitFigures {
  waitForMs: number;
  /** The pool's `blockAds` (the default scrape's true): ads are refused by the pool's in-process request proxy. */
  blockAds: boolean;
  pagesPerMode: number;
  /** cpuMsPerPage: the whole tree; nodeCpuMsPerPage: of it, this process (Playwright's client side, the pool, the site). */
  pool: { p50Ms: number; p95Ms: number; cpuMsPerPage: number; nodeCpuMsPerPage: number };
  bare: { p50Ms: number; p95Ms: number; cpuMsPerPage: number; nodeCpuMsPerPage: number };
  /** pool p50 ÷ bare p50 (target ≤ 1.10). */
  latencyRatio: number;
  /** pool CPU per page ÷ bare CPU per page (target ≤ 1.0). */
  cpuRatio: number;
}

const treeCpu = () => cpuByPid({ tree: process.pid });

export async function measureBrowserWait(opts: { pages: number; rounds: number; waitForMs: number; blockAds: boolean }): Promise<BrowserWaitFigures> {
  const site = sitePages({ pages: 1000, bytes: 20_000, js: true });
  const server = http.createServer((req, res) => {
    const html = site.html(Number(/^\/p\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1));
    res.writeHead(html ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html ?? 'not found');
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/p/`;
  const pool = new BrowserPool({ maxConcurrentPages: 1, recycleAfterPages: 100_000 });
  const browser = await chromium.launch({ executablePath: pool.executablePath(), headless: true, args: [...DEFAULT_LAUNCH_ARGS] });
  let page = 0;
  const check = (html: string) => {
    if (!html.includes('<h1>Page ')) throw new Error('the script-rendered content is missing');
  };
  const modes = {
    pool: async () => {
      const r = await pool.render({
        url: base + page++, timeoutMs: 30_000, waitFor: opts.waitForMs, mobile: false, blockAds: opts.blockAds, skipTlsVerification: false, allowPrivateNetwork: true,
      });
      check(r.html);
    },
    bare: async () => {
      const ctx = await browser.newContext();
      const p = await ctx.newPage();
      await p.goto(base + page++, { waitUntil: 'load' });
      await p.waitForTimeout(opts.waitForMs);
      check(await p.content());
      await ctx.close();
    },
  } as const;
  type Mode = keyof typeof modes;
  const acc: Record<Mode, { lat: number[]; cpuS: number; nodeUs: number }> = { pool: { lat: [], cpuS: 0, nodeUs: 0 }, bare: { lat: [], cpuS: 0, nodeUs: 0 } };
  try {
    for (const one of Object.values(modes)) for (let i = 0; i < 3; i++) await one(); // warm-up
    const perRound = Math.max(1, Math.ceil(opts.pages / opts.rounds));
    for (let r = 0; r < opts.rounds; r++) {
      // Alternate which mode goes first, so neither always follows the other's teardown.
      const order: Mode[] = r % 2 ? ['bare', 'pool'] : ['pool', 'bare'];
      for (const m of order) {
        const before = treeCpu();
        const nodeBefore = process.cpuUsage();
        for (let i = 0; i < perRound; i++) {
          const t = performance.now();
          await modes[m]();
          acc[m].lat.push(performance.now() - t);
        }
        const node = process.cpuUsage(nodeBefore);
        acc[m].nodeUs += node.user + node.system;
        acc[m].cpuS += cpuUsedBetween(before, treeCpu()).tree ?? 0;
      }
    }
  } finally {
    await pool.close();
    await browser.close();
    server.close();
  }
  const fig = (m: Mode) => ({
    p50Ms: Math.round(percentile(acc[m].lat, 50)),
    p95Ms: Math.round(percentile(acc[m].lat, 95)),
    cpuMsPerPage: Math.round((acc[m].cpuS * 1000) / acc[m].lat.length),
    nodeCpuMsPerPage: Math.round(acc[m].nodeUs / 1000 / acc[m].lat.length),
  });
  const poolFig = fig('pool');
  const bareFig = fig('bare');
  return {
    waitForMs: opts.waitForMs,
    blockAds: opts.blockAds,
    pagesPerMode: acc.pool.lat.length,
    pool: poolFig,
    bare: bareFig,
    latencyRatio: +(poolFig.p50Ms / bareFig.p50Ms).toFixed(3),
    cpuRatio: +(poolFig.cpuMsPerPage / bareFig.cpuMsPerPage).toFixed(2),
  };
}
