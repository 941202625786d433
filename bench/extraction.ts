import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transformHtml, type TransformOptions } from '@wds/transform';
import { round, writeResult } from './stats';

/**
 * Issue 34 (3): main-content extraction quality, WDS against trafilatura and Readability on the
 * same pages in the same harness, on two benchmarks:
 *  - WCXB's development split (../shared/bench/wcxb-dev, 1,358 pages, 7 page types), scored with
 *    a port of its evaluate.py (bag-of-words precision/recall/F1 on lowercased `\w+` tokens, and
 *    the share of its `with` snippets found and `without` snippets present, per type);
 *  - the article benchmark's dev half (../shared/bench/main-content), with its own evaluate.mjs.
 * WDS runs through transformHtml with the options a default POST /v2/scrape gives it
 * (onlyMainContent, removeBase64Images, markdown + links); its markdown is scored as text after
 * the article benchmark's stripMarkdown (link targets and markup are not words of the page).
 * CPU ms per page is process CPU time around the extraction alone, one thread, after a warm-up.
 *
 * Knobs: BENCH_EXTRACTION_TYPES (comma list of WCXB page types), BENCH_EXTRACTION_N (first N
 * pages of each type), BENCH_EXTRACTION_SKIP (trafilatura,readability,articles),
 * BENCH_EXTRACTION_DUMP=dir (writes each system's WCXB texts as evaluate.py results files),
 * BENCH_PYTHON (a python with trafilatura; default .venv-py/bin/python).
 */

const OPTS: TransformOptions = { onlyMainContent: true, removeBase64Images: true, want: { markdown: true, html: false, links: true, images: false } };
const TYPES = ['article', 'forum', 'product', 'collection', 'listing', 'documentation', 'service'] as const;
/** Best published dev F1 per type (rs-trafilatura, WCXB's README) and the overall target. */
const TARGETS: Record<string, number> = { overall: 0.88, article: 0.932, documentation: 0.932, service: 0.844, forum: 0.808, collection: 0.716, listing: 0.707, product: 0.641 };
const SKIP = new Set((process.env.BENCH_EXTRACTION_SKIP ?? '').split(',').filter(Boolean));
const ROOT = path.resolve(fileURLToPath(new URL('..', import.meta.url)));

interface Page {
  id: string;
  url: string;
  html: string;
  file: string;
}
interface Truth {
  mainContent: string;
  with: string[];
  without: string[];
  type: string;
}
type System = 'wds' | 'readability' | 'trafilatura';

function sharedDir(name: string, marker: string): string {
  for (const candidate of [path.join(ROOT, '..', 'shared', 'bench', name), path.join('/work/shared/bench', name)]) {
    if (fs.existsSync(path.join(candidate, marker))) return candidate;
  }
  throw new Error(`benchmark ${name} not found beside the repo (../shared/bench/${name})`);
}

const readGz = (file: string) => zlib.gunzipSync(fs.readFileSync(file)).toString('utf8');

/** evaluate.py's get_page_type: `_internal.page_type.primary`, category read as collection. */
function pageTypeOf(data: { _internal?: { page_type?: unknown } }): string {
  const pt = data._internal?.page_type;
  const t = typeof pt === 'string' ? pt : pt && typeof pt === 'object' ? ((pt as { primary?: string }).primary ?? 'article') : 'article';
  return t === 'category' ? 'collection' : t;
}

function loadWcxb(): { pages: Page[]; truth: Map<string, Truth> } {
  const dir = path.join(sharedDir('wcxb-dev', 'evaluate.py'), 'dev');
  const only = new Set((process.env.BENCH_EXTRACTION_TYPES ?? '').split(',').filter(Boolean));
  const perType = Number(process.env.BENCH_EXTRACTION_N ?? Infinity);
  const counts = new Map<string, number>();
  const pages: Page[] = [];
  const truth = new Map<string, Truth>();
  for (const f of fs.readdirSync(path.join(dir, 'ground-truth')).sort()) {
    if (!f.endsWith('.json')) continue;
    const id = f.slice(0, -5);
    const data = JSON.parse(fs.readFileSync(path.join(dir, 'ground-truth', f), 'utf8'));
    const gt = data.ground_truth;
    if (!gt || typeof gt !== 'object' || Array.isArray(gt)) continue;
    const type = pageTypeOf(data);
    if (only.size && !only.has(type)) continue;
    const n = counts.get(type) ?? 0;
    if (n >= perType) continue;
    counts.set(type, n + 1);
    const file = path.join(dir, 'html', `${id}.html.gz`);
    pages.push({ id, url: data.url ?? 'https://example.com/', html: readGz(file), file });
    truth.set(id, { mainContent: gt.main_content ?? '', with: gt.with ?? [], without: gt.without ?? [], type });
  }
  return { pages, truth };
}

/** evaluate.py's tokenize: lowercase, then `\w+` (Unicode letters, digits, underscore). */
const tokenize = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];

/** evaluate.py's word_f1: bag-of-words overlap. */
export function wordF1(pred: string, ref: string): [number, number, number] {
  const p = tokenize(pred);
  const r = tokenize(ref);
  if (!r.length) return p.length ? [0, 0, 0] : [1, 1, 1];
  if (!p.length) return [0, 0, 0];
  const counts = new Map<string, number>();
  for (const t of r) counts.set(t, (counts.get(t) ?? 0) + 1);
  let overlap = 0;
  for (const t of p) {
    const c = counts.get(t);
    if (c) {
      overlap++;
      counts.set(t, c - 1);
    }
  }
  const precision = overlap / p.length;
  const recall = overlap / r.length;
  return [precision, recall, precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0];
}

/** evaluate.py's snippet_check: the share of snippets found (case-insensitive substring). */
function snippetRate(text: string, snippets: string[]): number {
  if (!snippets.length) return 1;
  const lower = text.toLowerCase();
  return snippets.filter((s) => lower.includes(s.toLowerCase())).length / snippets.length;
}

interface Row {
  id: string;
  type: string;
  p: number;
  r: number;
  f1: number;
  with: number;
  without: number;
}

function scoreWcxb(texts: Map<string, string>, truth: Map<string, Truth>): Row[] {
  return [...truth].map(([id, t]) => {
    const pred = texts.get(id) ?? '';
    const [p, r, f1] = wordF1(pred, t.mainContent);
    return { id, type: t.type, p, r, f1, with: snippetRate(pred, t.with), without: snippetRate(pred, t.without) };
  });
}

function summarize(rows: Row[]) {
  const mean = (k: keyof Row) => round(rows.reduce((n, r) => n + (r[k] as number), 0) / (rows.length || 1), 3);
  return { n: rows.length, f1: mean('f1'), precision: mean('p'), recall: mean('r'), withRate: mean('with'), withoutRate: mean('without') };
}

function byType(rows: Row[]) {
  const out: Record<string, ReturnType<typeof summarize>> = { overall: summarize(rows) };
  for (const t of TYPES) {
    const of = rows.filter((r) => r.type === t);
    if (of.length) out[t] = summarize(of);
  }
  return out;
}

/** Runs `extract` over the pages twice (the first pass warms the JIT), timing the second. */
function timed(pages: Page[], extract: (p: Page) => string, toText: (out: string) => string = (s) => s): { texts: Map<string, string>; cpuMsPerPage: number } {
  for (const p of pages.slice(0, Math.min(50, pages.length))) extract(p);
  const raw = new Map<string, string>();
  const c0 = process.cpuUsage();
  for (const p of pages) raw.set(p.id, extract(p));
  const c = process.cpuUsage(c0);
  // Scoring's own conversion (markdown → text) is outside the timed loop.
  const texts = new Map([...raw].map(([id, out]) => [id, toText(out)]));
  return { texts, cpuMsPerPage: round((c.user + c.system) / 1000 / (pages.length || 1), 2) };
}

interface Evaluator {
  stripMarkdown(md: string): string;
  evaluateItems(items: { id: string; truth: string; pred: string }[], o: { nBootstrap: number }): { metrics: { f1: number; precision: number; recall: number } };
}

async function loadEvaluator(): Promise<Evaluator> {
  return (await import(pathToFileURL(path.join(sharedDir('main-content', 'ground-truth.json'), 'evaluate.mjs')).href)) as Evaluator;
}

const wdsMarkdown = (p: Page) => transformHtml(p.html, p.url, OPTS).markdown ?? '';

async function readabilityText(): Promise<(p: Page) => string> {
  const [{ Readability }, { parseHTML }] = await Promise.all([import('@mozilla/readability'), import('linkedom')]);
  return (p: Page) => {
    try {
      const { document } = parseHTML(p.html);
      const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
      return article?.textContent ?? '';
    } catch {
      return ''; // a page Readability cannot read scores as empty
    }
  };
}

function pythonWithTrafilatura(): string | null {
  const candidates = [process.env.BENCH_PYTHON, path.join(ROOT, '.venv-py', 'bin', 'python'), 'python3'].filter((x): x is string => !!x);
  for (const py of candidates) {
    if (spawnSync(py, ['-c', 'import trafilatura'], { stdio: 'ignore' }).status === 0) return py;
  }
  return null;
}

/** trafilatura in one Python process over all pages (bench/extraction-trafilatura.py). */
function trafilaturaTexts(pages: Page[]): { texts: Map<string, string>; cpuMsPerPage: number } | { missing: string } {
  const py = pythonWithTrafilatura();
  if (!py) return { missing: 'trafilatura not found: `.venv-py/bin/pip install trafilatura lxml_html_clean` (or set BENCH_PYTHON)' };
  const input = JSON.stringify(pages.map((p) => ({ id: p.id, url: p.url, html_gz: p.file })));
  const res = spawnSync(py, [path.join(ROOT, 'bench', 'extraction-trafilatura.py')], { input, maxBuffer: 1 << 30, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`trafilatura baseline failed: ${res.stderr}`);
  const out = JSON.parse(res.stdout) as { texts: Record<string, string>; cpuMs: number };
  return { texts: new Map(Object.entries(out.texts)), cpuMsPerPage: round(out.cpuMs / (pages.length || 1), 2) };
}

/** The article benchmark's dev half: 85 pages, as gz files beside a ground-truth.json. */
function loadArticles(): { pages: Page[]; truth: Record<string, string> } {
  const dir = sharedDir('main-content', 'ground-truth.json');
  const gt = JSON.parse(fs.readFileSync(path.join(dir, 'ground-truth.json'), 'utf8')) as Record<string, { url: string; articleBody: string }>;
  const pages = Object.entries(gt).map(([id, { url }]) => {
    const file = path.join(dir, 'html', `${id}.html.gz`);
    return { id, url, html: readGz(file), file };
  });
  return { pages, truth: Object.fromEntries(Object.entries(gt).map(([id, v]) => [id, v.articleBody])) };
}

const ratio = (a: number, b: number | undefined) => (b ? round(a / b, 3) : null);

export async function runExtractionBench() {
  const ev = await loadEvaluator();
  const systems: Partial<Record<System, (pages: Page[]) => { texts: Map<string, string>; cpuMsPerPage: number } | { missing: string }>> = {
    wds: (pages) => timed(pages, wdsMarkdown, (md) => ev.stripMarkdown(md)),
  };
  if (!SKIP.has('readability')) {
    const rd = await readabilityText();
    systems.readability = (pages) => timed(pages, rd);
  }
  if (!SKIP.has('trafilatura')) systems.trafilatura = trafilaturaTexts;

  const { pages, truth } = loadWcxb();
  const wcxb: Record<string, unknown> = {};
  const cpu: Record<string, number> = {};
  const scores: Partial<Record<System, ReturnType<typeof byType>>> = {};
  const dump = process.env.BENCH_EXTRACTION_DUMP;
  for (const [name, run] of Object.entries(systems) as [System, NonNullable<(typeof systems)[System]>][]) {
    const out = run(pages);
    if ('missing' in out) {
      wcxb[name] = { missing: out.missing };
      process.stderr.write(`${out.missing}\n`);
      continue;
    }
    scores[name] = byType(scoreWcxb(out.texts, truth));
    cpu[name] = out.cpuMsPerPage;
    if (dump) {
      fs.mkdirSync(dump, { recursive: true });
      fs.writeFileSync(path.join(dump, `${name}.json`), JSON.stringify(Object.fromEntries(out.texts)));
    }
  }
  for (const [name, s] of Object.entries(scores)) wcxb[name] = s;
  const wds = scores.wds!;
  // Side by side: WDS's F1 over each baseline's, and against the target, per type.
  const sideBySide = Object.fromEntries(
    Object.entries(wds).map(([t, s]) => [t, {
      wds: s.f1,
      target: TARGETS[t],
      readability: scores.readability?.[t]?.f1 ?? null,
      trafilatura: scores.trafilatura?.[t]?.f1 ?? null,
      vsReadability: ratio(s.f1, scores.readability?.[t]?.f1),
      vsTrafilatura: ratio(s.f1, scores.trafilatura?.[t]?.f1),
      meetsTarget: s.f1 >= TARGETS[t],
    }]),
  );

  let articles: Record<string, unknown> | undefined;
  if (!SKIP.has('articles')) {
    const a = loadArticles();
    articles = {};
    for (const [name, run] of Object.entries(systems) as [System, NonNullable<(typeof systems)[System]>][]) {
      const out = run(a.pages);
      if ('missing' in out) continue;
      const items = a.pages.map((p) => ({ id: p.id, truth: a.truth[p.id], pred: out.texts.get(p.id) ?? '' }));
      const m = ev.evaluateItems(items, { nBootstrap: 0 }).metrics;
      articles[name] = { f1: round(m.f1, 3), precision: round(m.precision, 3), recall: round(m.recall, 3), cpuMsPerPage: out.cpuMsPerPage };
    }
  }

  const result = {
    bench: 'extraction',
    options: 'WDS: transformHtml with a default scrape\'s options (onlyMainContent, markdown + links), markdown stripped to text; Readability 0.6 on linkedom (textContent); trafilatura default extract()',
    subset: { types: process.env.BENCH_EXTRACTION_TYPES ?? 'all', perType: process.env.BENCH_EXTRACTION_N ?? 'all', pages: pages.length },
    wcxbF1: sideBySide,
    wcxb,
    cpuMsPerPageWcxb: cpu,
    articlesDev: articles,
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult('extraction', result)}`);
  return result;
}
