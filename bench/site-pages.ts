import type { ServerResponse } from 'node:http';
// The synthetic crawl site's pages (bench/site-server.ts serves them; bench/search-cost.ts indexes
// them without a crawl): /p/i links to its three children (/p/3i+1 … /p/3i+3) and to a few hub
// pages, with ~`bytes` of text per page: one paragraph repeated, or (`varied`) different text in
// every paragraph (words of bench/search-corpus.ts, seeded by page), as real pages' text is.
import { makeCorpus, rng, type Corpus } from './search-corpus';

const PARA = '<p>Benchmark prose with <a href="/p/1">a link</a>, <b>bold words</b> and enough text to make markdown work. </p>';

export interface SitePages {
  /** Page i's HTML, or null beyond the site (404). */
  html(i: number): string | null;
}

export function sitePages(o: { pages: number; bytes?: number; js?: boolean; varied?: boolean }): SitePages {
  const bytes = o.bytes ?? 20_000;
  const filler = PARA.repeat(Math.max(1, Math.floor(bytes / PARA.length)));
  const corpus: Corpus | null = o.varied ? makeCorpus() : null;
  const fillerOf = (i: number): string => {
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
  };
  return {
    html(i) {
      if (!(i >= 0 && i < o.pages)) return null;
      const kids = [3 * i + 1, 3 * i + 2, 3 * i + 3].filter((k) => k < o.pages).map((k) => `<li><a href="/p/${k}">Page ${k}</a></li>`).join('');
      const body = `<nav><a href="/p/0">Home</a> <a href="/p/1">One</a> <a href="/p/2">Two</a></nav><main><h1>Page ${i}</h1><ul>${kids}</ul>${fillerOf(i)}</main><footer>footer</footer>`;
      if (o.js) {
        const script = `document.getElementById('root').innerHTML = ${JSON.stringify(body)};`;
        return `<!doctype html><html lang="en"><head><title>Page ${i}</title></head><body><div id="root"></div><script>${script}</script></body></html>`;
      }
      return `<!doctype html><html lang="en"><head><title>Page ${i}</title></head><body>${body}</body></html>`;
    },
  };
}

/** Answers GET /p/<n> with the site's page n, anything else 404 (the bench fixture servers' one route). */
export function answerPage(site: SitePages, url: string | undefined, res: ServerResponse): void {
  const m = /^\/p\/(\d+)$/.exec(url ?? '');
  const html = m ? site.html(Number(m[1])) : null;
  if (html === null) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(html);
}
