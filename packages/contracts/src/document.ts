/** The scrape response document (`data` of POST /v2/scrape), as the spec's response table gives it. */
export interface DocumentMetadata {
  title?: string | string[];
  description?: string | string[];
  keywords?: string | string[];
  language?: string | string[] | null;
  sourceURL: string;
  url: string;
  statusCode: number;
  contentType?: string;
  error?: string | null;
  scrapeId: string;
  cacheState?: 'hit' | 'miss';
  cachedAt?: string;
  creditsUsed?: number;
  proxyUsed?: 'basic' | 'stealth';
  /** Which engine produced the page (http, browser, cache). */
  engine?: string;
  numPages?: number;
  totalPages?: number;
  concurrencyLimited?: boolean;
  concurrencyQueueDurationMs?: number;
  [key: string]: unknown;
}

export interface ScrapeDocument {
  markdown?: string;
  html?: string;
  rawHtml?: string;
  rawBase64?: string;
  links?: string[];
  images?: string[];
  screenshot?: string;
  warning?: string;
  metadata: DocumentMetadata;
}

export interface ScrapeResponse {
  success: true;
  data: ScrapeDocument;
}
