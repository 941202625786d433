import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local SearXNG for tests: real HTTP speaking its search API (`GET|POST /search` with `q`,
 * `format=json`, `categories`, `engines`, `language`, `time_range`, `pageno`, `safesearch`),
 * answering its JSON (`query`, `number_of_results`, `results[]` with url/title/content/engine/
 * category/publishedDate/img_src/thumbnail_src/resolution, `unresponsive_engines`, …).
 *
 * Results come from a corpus of documents per category, matched on the words of `q` (operators
 * such as `site:` and `-site:` are honoured, as engines do), 10 per page. Scripting: replies taken
 * from a queue (`enqueue`: results, unresponsive engines, an HTTP status, a delay), and a
 * `jsonEnabled` switch: off, `format=json` gets the 403 a real instance sends when its
 * `search.formats` lacks json. Every request's parameters are logged.
 */
export interface FakeSearxngResult {
  url: string;
  title: string;
  content?: string;
  engine?: string;
  category?: string;
  publishedDate?: string | null;
  img_src?: string;
  thumbnail_src?: string;
  resolution?: string;
}

export interface FakeSearxngReply {
  results?: FakeSearxngResult[];
  /** [engine, reason] pairs, as SearXNG reports them. */
  unresponsive?: [string, string][];
  /** Answer with this HTTP status (and a text body) instead of results. */
  status?: number;
  /** Wait this long before answering. */
  delayMs?: number;
}

export interface FakeSearxngOptions {
  /** category → documents; `general` is the web. */
  corpus?: Record<string, FakeSearxngResult[]>;
  jsonEnabled?: boolean;
}

export interface FakeSearxng {
  url: string;
  /** Parameters of every /search request, in order. */
  requests: Record<string, string>[];
  enqueue(...replies: FakeSearxngReply[]): void;
  jsonEnabled: boolean;
  corpus: Record<string, FakeSearxngResult[]>;
  reset(): void;
  close(): Promise<void>;
}

const PAGE = 10;

export async function startFakeSearxng(opts: FakeSearxngOptions = {}): Promise<FakeSearxng> {
  const queue: FakeSearxngReply[] = [];
  const state: FakeSearxng = {
    url: '',
    requests: [],
    enqueue: (...r) => void queue.push(...r),
    jsonEnabled: opts.jsonEnabled ?? true,
    corpus: opts.corpus ?? {},
    reset() {
      queue.length = 0;
      state.requests.length = 0;
      state.jsonEnabled = opts.jsonEnabled ?? true;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/search' && url.pathname !== '/') return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
    let params = Object.fromEntries(url.searchParams);
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      params = { ...params, ...Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) };
    }
    state.requests.push(params);
    if (params.format === 'json' && !state.jsonEnabled) {
      return void res.writeHead(403, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1></body></html>');
    }
    const scripted = queue.shift();
    if (scripted?.delayMs) await new Promise((r) => setTimeout(r, scripted.delayMs));
    if (res.destroyed) return;
    if (scripted?.status) return void res.writeHead(scripted.status, { 'content-type': 'text/plain' }).end(`error ${scripted.status}`);
    const q = params.q ?? '';
    const pageno = Math.max(1, Number(params.pageno ?? 1) || 1);
    const categories = (params.categories ?? 'general').split(',');
    const all = scripted?.results ?? categories.flatMap((c) => match(state.corpus[c] ?? [], q).map((r) => ({ category: c, ...r })));
    const results = all.slice((pageno - 1) * PAGE, pageno * PAGE).map((r, i) => ({
      engine: 'fake',
      engines: [r.engine ?? 'fake'],
      template: 'default.html',
      parsed_url: [],
      positions: [i + 1],
      score: 1 / (i + 1),
      publishedDate: null,
      ...r,
    }));
    if (params.format !== 'json') return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${results.length} results</body></html>`);
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        query: q,
        number_of_results: all.length,
        results,
        answers: [],
        corrections: [],
        infoboxes: [],
        suggestions: [],
        unresponsive_engines: scripted?.unresponsive ?? [],
      }),
    );
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/** Documents containing every plain word of `q`, honouring site: / -site: / filetype:. */
function match(docs: FakeSearxngResult[], q: string): FakeSearxngResult[] {
  const words: string[] = [];
  const sites: string[] = [];
  const notSites: string[] = [];
  let filetype: string | null = null;
  for (const t of q.toLowerCase().split(/\s+/).filter(Boolean)) {
    if (t.startsWith('site:')) sites.push(t.slice(5));
    else if (t.startsWith('-site:')) notSites.push(t.slice(6));
    else if (t.startsWith('filetype:')) filetype = t.slice(9);
    else words.push(t);
  }
  const host = (u: string) => new URL(u).hostname.replace(/^www\./, '');
  const on = (u: string, d: string) => host(u) === d || host(u).endsWith(`.${d}`);
  return docs.filter((d) => {
    const text = `${d.title} ${d.content ?? ''}`.toLowerCase();
    if (!words.every((w) => text.includes(w))) return false;
    if (sites.length && !sites.some((s) => on(d.url, s))) return false;
    if (notSites.some((s) => on(d.url, s))) return false;
    if (filetype && !d.url.toLowerCase().endsWith(`.${filetype}`)) return false;
    return true;
  });
}
