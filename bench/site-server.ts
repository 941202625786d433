// A synthetic site for crawl benchmarks, in its own process (the pages: bench/site-pages.ts).
// Arguments: pages, bytes of text per page, and `js` (every page script-rendered: the HTML as
// served is an empty app root and a script that writes the heading, text and links into it, what
// the browser engine is for) or `varied` (every paragraph different text; the search bench indexes it).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerPage, sitePages } from './site-pages';

const site = sitePages({ pages: Number(process.argv[2] ?? 2000), bytes: Number(process.argv[3] ?? 20_000), js: process.argv[4] === 'js', varied: process.argv[4] === 'varied' });

const server = createServer((req, res) => {
  answerPage(site, req.url, res);
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as AddressInfo).port}\n`));
