// The polite bench's origins (bench/polite.ts): argv[2] sites of argv[3] pages each (bench/site-pages.ts),
// one port per site in this one process. Each site counts the requests it has open at once;
// GET /__stats answers {maxOpen, served} and resets them.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerPage, sitePages } from './site-pages';

const origins = Number(process.argv[2] ?? 50);
const site = sitePages({ pages: Number(process.argv[3] ?? 200), bytes: Number(process.argv[4] ?? 20_000) });

const ports = await Promise.all(
  Array.from({ length: origins }, () => {
    let open = 0;
    let maxOpen = 0;
    let served = 0;
    const server = createServer((req, res) => {
      if (req.url === '/__stats') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ maxOpen, served }));
        maxOpen = served = 0;
        return;
      }
      maxOpen = Math.max(maxOpen, ++open);
      served++;
      res.once('close', () => open--);
      answerPage(site, req.url, res);
    });
    server.keepAliveTimeout = 5_000;
    return new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  }),
);
process.stdout.write(`PORTS ${ports.join(',')}\n`);
