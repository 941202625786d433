// A synthetic site for crawl benchmarks, in its own process: /p/i links to its three children
// (/p/3i+1 … /p/3i+3) and to a few hub pages, with ~`bytes` of text per page. With `js` as the
// third argument every page is script-rendered: the HTML as served is an empty app root and a
// script that writes the heading, text and links into it (what the browser engine is for). With
// `varied` instead, every paragraph is different text (words of bench/search-corpus.ts, seeded by
// page and paragraph), as real pages' text is: the search bench indexes it (the default page is one
// paragraph repeated, which indexing stores once).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeCorpus, rng } from './search-corpus';

const pages = Number(process.argv[2] ?? 2000);
const bytes = Number(process.argv[3] ?? 20_000);
const para = '<p>Benchmark prose with <a href="/p/1">a link</a>, <b>bold words</b> and enough text to make markdown work. </p>';
const filler = para.repeat(Math.max(1, Math.floor(bytes / para.length)));
const js = process.argv[4] === 'js';
const corpus = process.argv[4] === 'varied' ? makeCorpus() : null;

/** Page i's text: the same paragraph repeated, or (varied) as many different paragraphs of about its length. */
function fillerOf(i: number): string {
  if (!corpus) return filler;
  const r = rng(7_919 * (i + 1));
  const words = (n: number) => Array.from({ length: n }, () => corpus.word(r)).join(' ');
  const paras: string[] = [];
  for (let size = 0; size < bytes; ) {
    const p = `<p>${words(3)} ${words(6)} <a href="/p/1">${words(2)}</a>, <b>${words(2)}</b> ${words(5)}. </p>`;
    paras.push(p);
    size += p.length;
  }
  return paras.join('');
}

const server = createServer((req, res) => {
  const m = /^\/p\/(\d+)$/.exec(req.url ?? '');
  const i = m ? Number(m[1]) : -1;
  if (i < 0 || i >= pages) return void res.writeHead(404).end();
  const kids = [3 * i + 1, 3 * i + 2, 3 * i + 3].filter((k) => k < pages).map((k) => `<li><a href="/p/${k}">Page ${k}</a></li>`).join('');
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  const body = `<nav><a href="/p/0">Home</a> <a href="/p/1">One</a> <a href="/p/2">Two</a></nav><main><h1>Page ${i}</h1><ul>${kids}</ul>${fillerOf(i)}</main><footer>footer</footer>`;
  if (js) {
    const script = `document.getElementById('root').innerHTML = ${JSON.stringify(body)};`;
    return void res.end(`<!doctype html><html lang="en"><head><title>Page ${i}</title></head><body><div id="root"></div><script>${script}</script></body></html>`);
  }
  res.end(`<!doctype html><html lang="en"><head><title>Page ${i}</title></head><body>${body}</body></html>`);
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as AddressInfo).port}\n`));
