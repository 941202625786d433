// `npm run bench -- <name>`: runs one benchmark (or all with no name) and writes bench/results/<name>-<time>.json.
const BENCHES: Record<string, () => Promise<unknown>> = {
  scrape: async () => (await import('./scrape')).runScrapeBench(),
  crawl: async () => (await import('./crawl')).runCrawlBench(),
  'crawl-scale': async () => (await import('./crawl-scale')).runCrawlScaleBench(),
  pdf: async () => (await import('./pdf')).runPdfBench(),
  browser: async () => (await import('./browser')).runBrowserBench(),
  load: async () => (await import('./load')).runLoadBench(),
  agent: async () => (await import('./agent')).runAgentBench(),
  transform: async () => (await import('./transform')).runTransformBench(),
  search: async () => (await import('./search')).runSearchBench(),
  llm: async () => (await import('./llm')).runLlmBench(),
  'scrape-paths': async () => (await import('./scrape-paths')).runScrapePathsBench(),
  monitor: async () => (await import('./monitor')).runMonitorBench(),
  'search-cost': async () => (await import('./search-cost')).runSearchCostBench(),
  'cache-body': async () => (await import('./cache-body')).runCacheBodyBench(),
  extraction: async () => (await import('./extraction')).runExtractionBench(),
  polite: async () => (await import('./polite')).runPoliteBench(),
};

const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = names.filter((n) => !BENCHES[n]);
if (unknown.length) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; available: ${Object.keys(BENCHES).join(', ')}\n`);
  process.exit(2);
}
for (const name of names.length ? names : Object.keys(BENCHES)) {
  await BENCHES[name]!();
}
process.exit(0);
export {};
