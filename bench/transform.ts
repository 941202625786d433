import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transformHtml, type TransformOptions } from '@wds/transform';
import { transformHtml as legacyTransformHtml } from './transform-legacy/transform';
import { round, writeResult } from './stats';

/**
 * Issue 20 (2): the HTML transform per page, today's engine against the one before issue 20
 * (bench/transform-legacy, a frozen copy), on the labelled main-content pages, in one process
 * on one thread. The engines alternate pass by pass (A/B/A/B…) because this host's speed
 * drifts up to 2× within an hour: each ratio compares two neighbouring passes. Each pass
 * converts every page with onlyMainContent (main content + markdown + links + metadata), as a
 * crawl does. CPU time (process.cpuUsage) is the figure; wall time is reported beside it.
 * Also scores both engines' markdown with the benchmark's evaluator (F1).
 *
 * Knobs: BENCH_TRANSFORM_ROUNDS (A/B pairs, default 5), BENCH_MAIN_CONTENT_DIR.
 */
const ROUNDS = Number(process.env.BENCH_TRANSFORM_ROUNDS ?? 5);
const OPTS: TransformOptions = { onlyMainContent: true, removeBase64Images: true, want: { markdown: true, html: false, links: true, images: false } };

interface Page {
  id: string;
  url: string;
  html: string;
}

function benchDir(): string {
  if (process.env.BENCH_MAIN_CONTENT_DIR) return process.env.BENCH_MAIN_CONTENT_DIR;
  const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
  for (const candidate of [path.join(root, '..', 'shared', 'bench', 'main-content'), '/work/shared/bench/main-content']) {
    if (fs.existsSync(path.join(candidate, 'ground-truth.json'))) return candidate;
  }
  throw new Error('main-content benchmark not found: set BENCH_MAIN_CONTENT_DIR to ../shared/bench/main-content');
}

function loadPages(dir: string): { pages: Page[]; truth: Record<string, string> } {
  const gt = JSON.parse(fs.readFileSync(path.join(dir, 'ground-truth.json'), 'utf8')) as Record<string, { url: string; articleBody: string }>;
  const pages = Object.entries(gt).map(([id, { url }]) => ({ id, url, html: zlib.gunzipSync(fs.readFileSync(path.join(dir, 'html', `${id}.html.gz`))).toString('utf8') }));
  return { pages, truth: Object.fromEntries(Object.entries(gt).map(([id, v]) => [id, v.articleBody])) };
}

type Engine = (html: string, url: string, opts: TransformOptions) => { markdown?: string };

/** One pass over all pages: CPU and wall ms per page. */
function pass(engine: Engine, pages: Page[]): { cpuMs: number; wallMs: number } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const p of pages) engine(p.html, p.url, OPTS);
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000 / pages.length, wallMs: wall / pages.length };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function f1Of(engine: Engine, pages: Page[], truth: Record<string, string>, dir: string) {
  const evaluator = (await import(pathToFileURL(path.join(dir, 'evaluate.mjs')).href)) as {
    stripMarkdown(md: string): string;
    evaluateItems(items: { id: string; truth: string; pred: string }[], o: { nBootstrap: number }): { metrics: { f1: number; precision: number; recall: number } };
  };
  const items = pages.map((p) => ({ id: p.id, truth: truth[p.id], pred: evaluator.stripMarkdown(engine(p.html, p.url, OPTS).markdown ?? '') }));
  const m = evaluator.evaluateItems(items, { nBootstrap: 0 }).metrics;
  return { f1: round(m.f1, 3), precision: round(m.precision, 3), recall: round(m.recall, 3) };
}

export async function runTransformBench() {
  const dir = benchDir();
  const { pages, truth } = loadPages(dir);
  const engines: [string, Engine][] = [['legacy', legacyTransformHtml], ['current', transformHtml]];
  // Warm-up: JIT both engines on every page before timing.
  for (const [, e] of engines) pass(e, pages);

  const runs: Record<string, { cpuMs: number; wallMs: number }[]> = { legacy: [], current: [] };
  const ratios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which engine goes first, so neither always runs on the warmer/cooler half.
    const order = r % 2 ? [...engines].reverse() : engines;
    for (const [name, e] of order) runs[name].push(pass(e, pages));
    ratios.push(runs.legacy[r].cpuMs / runs.current[r].cpuMs);
  }
  const perEngine = (name: string) => ({
    cpuMsPerPage: round(median(runs[name].map((x) => x.cpuMs))),
    wallMsPerPage: round(median(runs[name].map((x) => x.wallMs))),
    cpuMsPerPass: runs[name].map((x) => round(x.cpuMs)),
  });
  const result = {
    bench: 'transform',
    pages: pages.length,
    avgPageKb: round(pages.reduce((n, p) => n + p.html.length, 0) / pages.length / 1024, 1),
    rounds: ROUNDS,
    options: 'onlyMainContent; markdown + links + metadata; one thread',
    legacy: { ...perEngine('legacy'), ...(await f1Of(legacyTransformHtml, pages, truth, dir)) },
    current: { ...perEngine('current'), ...(await f1Of(transformHtml, pages, truth, dir)) },
    speedup: round(median(ratios)),
    speedupPerRound: ratios.map((x) => round(x)),
    targets: { speedup: 5, f1: 0.96 },
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult('transform', result)}`);
  return result;
}
