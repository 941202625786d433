/**
 * Runs transformHtml (onlyMainContent) over the labelled main-content pages and
 * writes one markdown file per page for the shared evaluator:
 *   npx tsx packages/transform/bench/main-content.ts [outDir] [benchDir]
 *   node /work/shared/bench/main-content/evaluate.mjs --pred <outDir>
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { transformHtml } from '../src/transform';

const out = process.argv[2] ?? '/tmp/scraper-main-content-preds';
const benchDir = process.argv[3] ?? '/work/shared/bench/main-content';
fs.mkdirSync(out, { recursive: true });
const gt = JSON.parse(fs.readFileSync(path.join(benchDir, 'ground-truth.json'), 'utf8')) as Record<string, { url: string }>;
const started = performance.now();
for (const [id, { url }] of Object.entries(gt)) {
  const html = zlib.gunzipSync(fs.readFileSync(path.join(benchDir, 'html', `${id}.html.gz`))).toString('utf8');
  const { markdown } = transformHtml(html, url, {
    onlyMainContent: true,
    removeBase64Images: true,
    want: { markdown: true, html: false, links: false, images: false },
  });
  fs.writeFileSync(path.join(out, `${id}.md`), markdown ?? '');
}
console.log(`${Object.keys(gt).length} pages in ${Math.round(performance.now() - started)} ms -> ${out}`);
