import { API_ROUTES, type ApiRoute, type RequestSchemaName, type ResponseSchemaName } from './api-routes';

/**
 * The v1 routes: each is the v2 route it adapts (apps/api/src/routes/v1.ts), documented with the
 * v2 route's statuses and errors, its v1 path and operation id, and the v1 body and answer where
 * v1's differ. Derived, not written twice, so a status added to a v2 route is documented for v1.
 */
interface V1Route {
  method: ApiRoute['method'];
  v1: string;
  /** The v2 route it runs (its errors and parameters are v1's too). */
  v2: string;
  body?: RequestSchemaName;
  ok?: ResponseSchemaName;
  summary?: string;
}

const ADAPTED: V1Route[] = [
  { method: 'POST', v1: '/v1/scrape', v2: '/v2/scrape', body: 'V1ScrapeRequest', ok: 'V1ScrapeResponse', summary: 'Scrape one URL (v1 request and answer)' },
  { method: 'POST', v1: '/v1/map', v2: '/v2/map', body: 'V1MapRequest', ok: 'V1MapResponse', summary: "A site's URLs as strings (v1)" },
  { method: 'POST', v1: '/v1/crawl', v2: '/v2/crawl', body: 'V1CrawlRequest', summary: 'Start a crawl (v1 request)' },
  { method: 'GET', v1: '/v1/crawl/active', v2: '/v2/crawl/active' },
  { method: 'GET', v1: '/v1/crawl/:id', v2: '/v2/crawl/:id', ok: 'V1JobStatusResponse', summary: 'Status and documents of a crawl or batch scrape (v1; the JS SDK v1 polls batches here)' },
  { method: 'DELETE', v1: '/v1/crawl/:id', v2: '/v2/crawl/:id' },
  { method: 'GET', v1: '/v1/crawl/:id/errors', v2: '/v2/crawl/:id/errors' },
  { method: 'POST', v1: '/v1/batch/scrape', v2: '/v2/batch/scrape', body: 'V1BatchScrapeRequest', summary: 'Start a batch scrape (v1 request)' },
  { method: 'GET', v1: '/v1/batch/scrape/:id', v2: '/v2/batch/scrape/:id', ok: 'V1JobStatusResponse' },
  { method: 'DELETE', v1: '/v1/batch/scrape/:id', v2: '/v2/batch/scrape/:id' },
  { method: 'GET', v1: '/v1/batch/scrape/:id/errors', v2: '/v2/batch/scrape/:id/errors' },
  { method: 'POST', v1: '/v1/search', v2: '/v2/search', body: 'V1SearchRequest', ok: 'V1SearchResponse', summary: 'Web search (v1: results as one list)' },
  { method: 'POST', v1: '/v1/extract', v2: '/v2/extract', body: 'V1ExtractRequest' },
  { method: 'GET', v1: '/v1/extract/:id', v2: '/v2/extract/:id' },
  { method: 'GET', v1: '/v1/team/credit-usage', v2: '/v2/team/credit-usage', ok: 'V1CreditUsageResponse' },
  { method: 'GET', v1: '/v1/team/token-usage', v2: '/v2/team/token-usage', ok: 'V1TokenUsageResponse' },
  { method: 'GET', v1: '/v1/team/queue-status', v2: '/v2/team/queue-status' },
];

/** The JS SDK v1 reads crawl and batch errors with DELETE (its checkCrawlErrors / checkBatchScrapeErrors): answered like GET. */
const SDK_ERRORS_WITH_DELETE: V1Route[] = [
  { method: 'DELETE', v1: '/v1/crawl/:id/errors', v2: '/v2/crawl/:id/errors', summary: 'Failed pages of a crawl (DELETE, as the JS SDK v1 sends it)' },
  { method: 'DELETE', v1: '/v1/batch/scrape/:id/errors', v2: '/v2/batch/scrape/:id/errors', summary: 'Failed pages of a batch scrape (DELETE, as the JS SDK v1 sends it)' },
];

/** v1 endpoints WDS does not run: answered 400 FEATURE_NOT_AVAILABLE naming what to use instead. */
export const V1_UNAVAILABLE = [
  { method: 'POST', path: '/v1/deep-research', instead: 'POST /v2/agent' },
  { method: 'GET', path: '/v1/deep-research/:id', instead: 'GET /v2/agent/{id}' },
  { method: 'POST', path: '/v1/llmstxt', instead: 'POST /v2/map and POST /v2/batch/scrape' },
  { method: 'GET', path: '/v1/llmstxt/:id', instead: 'POST /v2/map and POST /v2/batch/scrape' },
] as const;

function derive(r: V1Route): ApiRoute {
  const base = API_ROUTES.find((x) => x.method === r.method && x.path === r.v2) ?? API_ROUTES.find((x) => x.path === r.v2 && x.method === 'GET');
  if (!base) throw new Error(`v1 route ${r.method} ${r.v1}: no v2 route ${r.v2}`);
  return {
    ...base,
    method: r.method,
    path: r.v1,
    operationId: `v1${base.operationId[0]!.toUpperCase()}${base.operationId.slice(1)}${r.method === base.method ? '' : 'ByDelete'}`,
    summary: r.summary ?? `${base.summary} (v1)`,
    ...(r.body ? { body: { json: r.body } } : {}),
    responses: r.ok ? { ...base.responses, 200: { json: r.ok, description: 'Success (v1 shape).' } } : base.responses,
    // Headers such as x-request-id (catalog mode) belong to v2 only.
    headers: r.v1 === '/v1/batch/scrape' ? base.headers : undefined,
  };
}

export const V1_ROUTES: ApiRoute[] = [
  ...[...ADAPTED, ...SDK_ERRORS_WITH_DELETE].map(derive),
  ...V1_UNAVAILABLE.map(
    (u): ApiRoute => ({
      method: u.method, path: u.path, operationId: `v1Unavailable${u.path.replace(/[^A-Za-z]/g, '')}${u.method}`, tag: 'Agent', auth: 'bearer',
      summary: `Not served by WDS: use ${u.instead}`,
      ...(u.path.endsWith(':id') ? { params: { id: { description: 'The job id (none exists: nothing is started).', schema: { type: 'string' } } } } : {}),
      description: '400 FEATURE_NOT_AVAILABLE always (after authentication): Firecrawl has deprecated this v1 endpoint and WDS does not run it.',
      responses: { 400: { json: 'ErrorBody', description: 'FEATURE_NOT_AVAILABLE, naming the v2 endpoint to use.' }, 401: { json: 'ErrorBody', description: 'Unauthorized: Invalid token.' }, 413: { json: 'ErrorBody', description: 'Payload Too Large.' }, 415: { json: 'ErrorBody', description: 'Unsupported Media Type.' }, 429: { json: 'ErrorBody', description: 'Rate limit exceeded.' }, 500: { json: 'ErrorBody', description: 'Internal Server Error.' } },
    }),
  ),
];
