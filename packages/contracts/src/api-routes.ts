import { z } from 'zod';
import {
  agentCancelResponseSchema, agentListResponseSchema, agentRequestSchema, agentSnapshotResponseSchema, agentStartedResponseSchema,
  agentStatusResponseSchema, agentThreadResponseSchema, agentTraceResponseSchema,
} from './agent';
import { batchScrapeRequestSchema, crawlParamsPreviewSchema, crawlRequestSchema, mapRequestSchema } from './crawl';
import { crawlParamsPreviewResponseSchema, extractRequestSchema, extractStartedResponseSchema, extractStatusResponseSchema } from './extract';
import {
  monitorCheckDetailResponseSchema, monitorCheckListResponseSchema, monitorCreateRequestSchema, monitorDeletedResponseSchema,
  monitorListResponseSchema, monitorRecipientLinkResponseSchema, monitorRecipientLinkViewSchema, monitorRecipientResendRequestSchema, monitorRecipientResponseSchema, monitorResponseSchema, monitorRunRequestSchema, monitorRunResponseSchema, monitorUpdateRequestSchema,
} from './monitor';
import { interactRequestSchema, interactResponseSchema, interactStopResponseSchema } from './interact';
import { parseOptionsSchema } from './parse';
import {
  activeCrawlsResponseSchema, batchStartedResponseSchema, concurrencyCheckResponseSchema, creditUsageResponseSchema, tokenUsageResponseSchema, parseFormatsResponseSchema,
  errorBodySchema, healthResponseSchema, jobCancelledResponseSchema, jobErrorsResponseSchema, jobStartedResponseSchema,
  jobStatusResponseSchema, jobStreamMessageSchema, mapResponseSchema, parseDocumentSchema, queueStatusResponseSchema, readyResponseSchema,
  scrapeDocumentSchema, scrapeOrCatalogResponseSchema, scrapeResponseSchema, scrapeStatusResponseSchema,
} from './responses';
import { scrapeCatalogRequestSchema, scrapeUrlRequestSchema } from './scrape';
import { searchRequestSchema, searchResponseSchema } from './search';
import {
  v1BatchScrapeRequestSchema, v1CrawlRequestSchema, v1CreditUsageResponseSchema, v1ExtractRequestSchema, v1JobStatusResponseSchema, v1MapRequestSchema,
  v1MapResponseSchema, v1ScrapeRequestSchema, v1ScrapeResponseSchema, v1SearchRequestSchema, v1SearchResponseSchema, v1TokenUsageResponseSchema,
} from './v1';

/**
 * Every route the API answers, with what it takes and each status it can answer: the table
 * `GET /v2/openapi.json` is generated from (openapi.ts). The API checks at start, under the
 * test suite's response check, that the routes it registered are exactly these, and every
 * response the suite receives is validated against the generated document — so this table
 * cannot drift from the controllers without a test failing.
 */

/** Request bodies, validated with io "input" (defaults optional, transforms' inputs). */
export const REQUEST_SCHEMAS = {
  ScrapeRequest: scrapeUrlRequestSchema,
  ScrapeCatalogRequest: scrapeCatalogRequestSchema,
  CrawlRequest: crawlRequestSchema,
  CrawlParamsPreviewRequest: crawlParamsPreviewSchema,
  BatchScrapeRequest: batchScrapeRequestSchema,
  MapRequest: mapRequestSchema,
  ExtractRequest: extractRequestSchema,
  SearchRequest: searchRequestSchema,
  ParseOptions: parseOptionsSchema,
  AgentRequest: agentRequestSchema,
  MonitorCreateRequest: monitorCreateRequestSchema,
  MonitorUpdateRequest: monitorUpdateRequestSchema,
  MonitorRunRequest: monitorRunRequestSchema,
  MonitorRecipientResendRequest: monitorRecipientResendRequestSchema,
  InteractRequest: interactRequestSchema,
  V1ScrapeRequest: v1ScrapeRequestSchema,
  V1BatchScrapeRequest: v1BatchScrapeRequestSchema,
  V1CrawlRequest: v1CrawlRequestSchema,
  V1MapRequest: v1MapRequestSchema,
  V1SearchRequest: v1SearchRequestSchema,
  V1ExtractRequest: v1ExtractRequestSchema,
} as const;

export const RESPONSE_SCHEMAS = {
  ErrorBody: errorBodySchema,
  ScrapeDocument: scrapeDocumentSchema,
  ScrapeResponse: scrapeResponseSchema,
  ScrapeOrCatalogResponse: scrapeOrCatalogResponseSchema,
  ScrapeStatusResponse: scrapeStatusResponseSchema,
  JobStartedResponse: jobStartedResponseSchema,
  BatchStartedResponse: batchStartedResponseSchema,
  JobStatusResponse: jobStatusResponseSchema,
  JobCancelledResponse: jobCancelledResponseSchema,
  JobErrorsResponse: jobErrorsResponseSchema,
  ActiveCrawlsResponse: activeCrawlsResponseSchema,
  MapResponse: mapResponseSchema,
  CrawlParamsPreviewResponse: crawlParamsPreviewResponseSchema,
  ExtractStartedResponse: extractStartedResponseSchema,
  ExtractStatusResponse: extractStatusResponseSchema,
  SearchResponse: searchResponseSchema,
  ParseDocument: parseDocumentSchema,
  ParseResponse: z.strictObject({ success: z.literal(true), data: parseDocumentSchema }),
  CreditUsageResponse: creditUsageResponseSchema,
  TokenUsageResponse: tokenUsageResponseSchema,
  ParseFormatsResponse: parseFormatsResponseSchema,
  QueueStatusResponse: queueStatusResponseSchema,
  ConcurrencyCheckResponse: concurrencyCheckResponseSchema,
  HealthResponse: healthResponseSchema,
  ReadyResponse: readyResponseSchema,
  JobStreamMessage: jobStreamMessageSchema,
  AgentStartedResponse: agentStartedResponseSchema,
  AgentStatusResponse: agentStatusResponseSchema,
  AgentListResponse: agentListResponseSchema,
  AgentCancelResponse: agentCancelResponseSchema,
  AgentTraceResponse: agentTraceResponseSchema,
  AgentSnapshotResponse: agentSnapshotResponseSchema,
  AgentThreadResponse: agentThreadResponseSchema,
  MonitorResponse: monitorResponseSchema,
  MonitorListResponse: monitorListResponseSchema,
  MonitorDeletedResponse: monitorDeletedResponseSchema,
  MonitorRunResponse: monitorRunResponseSchema,
  MonitorRecipientResponse: monitorRecipientResponseSchema,
  MonitorRecipientLinkResponse: monitorRecipientLinkResponseSchema,
  MonitorRecipientLinkView: monitorRecipientLinkViewSchema,
  MonitorCheckListResponse: monitorCheckListResponseSchema,
  MonitorCheckDetailResponse: monitorCheckDetailResponseSchema,
  InteractResponse: interactResponseSchema,
  InteractStopResponse: interactStopResponseSchema,
  V1ScrapeResponse: v1ScrapeResponseSchema,
  V1JobStatusResponse: v1JobStatusResponseSchema,
  V1MapResponse: v1MapResponseSchema,
  V1SearchResponse: v1SearchResponseSchema,
  V1CreditUsageResponse: v1CreditUsageResponseSchema,
  V1TokenUsageResponse: v1TokenUsageResponseSchema,
  OpenApiDocument: z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }),
} as const;

export type RequestSchemaName = keyof typeof REQUEST_SCHEMAS;
export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS;

/** What one status answers: a JSON body (a schema name), or another media type. */
export type RouteResponse =
  /** `html`: the route also answers text/html (to a browser) with the same status. */
  | { json: ResponseSchemaName; description: string; html?: boolean }
  | { text: string; description: string }
  | { binary: string[]; description: string };

export interface ApiRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** The route as the API registers it (Fastify syntax: `:id`, `*`). */
  path: string;
  operationId: string;
  summary: string;
  tag: 'Scraping' | 'Crawling' | 'Mapping' | 'Search' | 'Extraction' | 'Parsing' | 'Agent' | 'Monitoring' | 'Account' | 'Operations';
  auth: 'bearer' | 'none' | 'signed-link';
  description?: string;
  body?: { json: RequestSchemaName | RequestSchemaName[] } | { multipart: { file: string; options: RequestSchemaName } };
  query?: Record<string, { description: string; schema: Record<string, unknown>; required?: boolean }>;
  /** Optional request headers the route reads (besides Authorization). */
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
  /** Path parameters named in `path`, with a description and a JSON schema. */
  params?: Record<string, { description: string; schema: Record<string, unknown> }>;
  responses: Record<number, RouteResponse>;
  /** WebSocket served on the same path (HTTP upgrade); documented as the `x-websocket` extension. */
  websocket?: { description: string; message: ResponseSchemaName };
}

/** The files `GET /docs` loads from `/docs/{asset}` (apps/api/src/controllers/v2/docs.ts serves each). */
export const DOCS_ASSETS = ['swagger-ui-bundle.js', 'swagger-ui.css', 'init.js'] as const;
export type DocsAsset = (typeof DOCS_ASSETS)[number];

const ERROR_TEXT: Record<number, string> = {
  400: 'Bad Request: the body, a parameter or a header failed validation (`details` names the fields), `Invalid URL`, or `FEATURE_NOT_AVAILABLE`.',
  401: 'Unauthorized: Invalid token.',
  402: 'Payment Required: Insufficient credits (the team\'s credit_limit is used up).',
  403: 'Forbidden: the key lacks the scope, the team lacks the feature, or the URL is blocked.',
  404: 'Not Found.',
  408: 'Request Timeout: the job did not finish within its `timeout`.',
  409: 'Conflict: the resource state forbids the operation.',
  410: 'Gone: the file link has expired, the scrape is past its interact window, or the interact session has ended.',
  413: 'Payload Too Large.',
  415: 'Unsupported Media Type.',
  422: 'Unprocessable Entity: the content cannot be converted (corrupt or too complex).',
  429: 'Rate limit exceeded (with `Retry-After`) or Concurrency limit reached.',
  500: 'Internal Server Error.',
  502: 'Bad Gateway: the target could not be reached or answered invalid HTTP (DNS, TLS, connection).',
  503: 'Service Unavailable: a needed worker (e.g. the browser engine) is not running, or the workflow service did not accept the job.',
  504: 'Gateway Timeout.',
};

function errors(...statuses: number[]): Record<number, RouteResponse> {
  return Object.fromEntries(statuses.map((s) => [s, { json: 'ErrorBody', description: ERROR_TEXT[s]! }]));
}
const ok = (json: ResponseSchemaName, description = 'Success.'): Record<number, RouteResponse> => ({ 200: { json, description } });

/** Every authenticated route: bad key, missing scope, per-team rate limit, unexpected failure. */
const AUTHED = [401, 403, 429, 500];
/** Routes with a JSON body: malformed JSON or failed validation, oversized body, non-JSON body. */
const JSON_BODY = [400, 413, 415];
/** What a job that ran on a worker can fail with (activity errors crossing Temporal keep their status). */
const JOB_FAILURES = [404, 408, 409, 422, 502, 503, 504];
/** Crawl and batch jobs whose workflow Temporal did not accept are failed at once (apps/api/src/services/jobs.ts startJob). */
const JOB_NOT_STARTED = 503;

const uuidParam = (what: string) => ({ id: { description: `The ${what}'s id.`, schema: { type: 'string', format: 'uuid' } } });
const skipQuery = {
  skip: { description: 'Documents to skip: the `next` link sets it.', schema: { type: 'string', pattern: '^[0-9]{1,15}$' } },
};
const WEBSOCKET = (what: string) => ({
  description:
    `The same path as a WebSocket (HTTP upgrade): the ${what}'s progress as the JS SDK's watcher reads it. ` +
    'The API key goes in the `Sec-WebSocket-Protocol` header (as the SDK sends it) or as `Authorization: Bearer`. ' +
    'Messages: `catchup` (status and documents so far), `document` per new page, `status` when counters move, then `done` ' +
    '(completed) or a last `status` (failed/cancelled); the server then closes with 1000 (1001 when it shuts down). ' +
    'Refused upgrades are answered with the error body: 401 (key), 403 (scope), 404 (job), 429 (too many watchers for the key).',
  message: 'JobStreamMessage' as const,
});

function jobRoutes(kind: 'crawl' | 'batch'): ApiRoute[] {
  const base = kind === 'crawl' ? '/v2/crawl' : '/v2/batch/scrape';
  const name = kind === 'crawl' ? 'Crawl' : 'BatchScrape';
  const label = kind === 'crawl' ? 'crawl' : 'batch scrape';
  const tag = kind === 'crawl' ? 'Crawling' : 'Scraping';
  return [
    {
      method: 'GET', path: `${base}/:id`, operationId: `get${name}Status`, tag, auth: 'bearer',
      summary: `Status and documents of a ${label}`, params: uuidParam(label), query: skipQuery,
      responses: { ...ok('JobStatusResponse'), ...errors(400, 404, ...AUTHED) },
      websocket: WEBSOCKET(label),
    },
    {
      method: 'DELETE', path: `${base}/:id`, operationId: `cancel${name}`, tag, auth: 'bearer',
      summary: `Cancel a ${label}`, params: uuidParam(label),
      // A DELETE carrying a body is parsed like any other: malformed JSON 400, too large 413, not JSON 415.
      responses: { ...ok('JobCancelledResponse'), ...errors(...JSON_BODY, 404, 409, ...AUTHED) },
    },
    {
      method: 'GET', path: `${base}/:id/errors`, operationId: `get${name}Errors`, tag, auth: 'bearer',
      summary: `Failed pages and robots.txt refusals of a ${label}`, params: uuidParam(label),
      responses: { ...ok('JobErrorsResponse'), ...errors(400, 404, ...AUTHED) },
    },
  ];
}

/** Agent jobs: the operations the JS SDK calls (startAgent, getAgentStatus, listAgents, cancelAgent, getAgentTrace, getAgentSnapshot, getAgentThread). */
function agentRoutes(): ApiRoute[] {
  const tag = 'Agent' as const;
  const id = uuidParam('agent job');
  return [
    {
      method: 'POST', path: '/v2/agent', operationId: 'startAgent', tag, auth: 'bearer',
      summary: 'Start an agent job (needs an LLM: else 400 FEATURE_NOT_AVAILABLE)', body: { json: 'AgentRequest' },
      description: '400 for zero-data-retention teams, and for a `maxCredits` above the team\'s agent credit ceiling (WDS_AGENT_MAX_CREDITS, or its team_limits row; an unset `maxCredits` is 2,500 or that ceiling, the lower); 404 / 409 for a `threadId` that is unknown / still running; 422 for a `schema` that is not JSON Schema.',
      responses: { ...ok('AgentStartedResponse'), ...errors(...JSON_BODY, 402, 404, 409, 422, ...AUTHED, JOB_NOT_STARTED) },
    },
    {
      method: 'GET', path: '/v2/agent', operationId: 'listAgents', tag, auth: 'bearer',
      summary: "The team's agent jobs, newest first, 20 a page",
      query: { before: { description: 'Only jobs created before this Unix time in milliseconds (the `next` link sets it).', schema: { type: 'string' } } },
      responses: { ...ok('AgentListResponse'), ...errors(400, ...AUTHED) },
    },
    {
      method: 'GET', path: '/v2/agent/threads/:threadId', operationId: 'getAgentThread', tag, auth: 'bearer',
      summary: 'A thread and its runs, oldest turn first',
      params: { threadId: { description: 'The thread id startAgent returned.', schema: { type: 'string', format: 'uuid' } } },
      query: { includeData: { description: '`true`: each succeeded run carries its data.', schema: { type: 'string' } } },
      responses: { ...ok('AgentThreadResponse'), ...errors(400, 404, ...AUTHED) },
    },
    {
      method: 'GET', path: '/v2/agent/:id', operationId: 'getAgentStatus', tag, auth: 'bearer',
      summary: 'Status and result of an agent job', params: id,
      responses: { ...ok('AgentStatusResponse'), ...errors(400, 404, ...AUTHED) },
    },
    {
      method: 'DELETE', path: '/v2/agent/:id', operationId: 'cancelAgent', tag, auth: 'bearer',
      summary: 'Cancel an agent job', params: id,
      description: '409 `Agent is already cancelled` while it is being cancelled, `Agent already finished` once it has ended.',
      responses: { ...ok('AgentCancelResponse'), ...errors(...JSON_BODY, 404, 409, ...AUTHED) },
    },
    {
      method: 'GET', path: '/v2/agent/:id/trace', operationId: 'getAgentTrace', tag, auth: 'bearer',
      summary: "An agent job's trace events (all its agents)", params: id,
      description: 'Until the job has completed, and for a job that failed (unbilled), events leave out what the run read and the model wrote: tool parameters and results, artifact paths, tool error messages.',
      query: { liveView: { description: '`true`: also the active browser sessions (none: pooled pages have no live view).', schema: { type: 'string' } } },
      responses: { ...ok('AgentTraceResponse'), ...errors(400, 404, ...AUTHED) },
    },
    {
      method: 'GET', path: '/v2/agent/:id/snapshots/:snapshotId', operationId: 'getAgentSnapshot', tag, auth: 'bearer',
      summary: 'The content of an artifact version an artifact.updated event names',
      description: '409 `AGENT_RESULTS_WITHHELD` until the job has completed, and for a job that failed: failed runs are not billed, and their results are not served.',
      params: { ...id, snapshotId: { description: 'The snapshotId of an artifact.updated event.', schema: { type: 'string', format: 'uuid' } } },
      responses: { ...ok('AgentSnapshotResponse'), ...errors(400, 404, 409, ...AUTHED) },
    },
  ];
}

/** Monitors: the operations of Firecrawl's API reference and the JS SDK (createMonitor … getMonitorCheck). */
function monitorRoutes(): ApiRoute[] {
  const tag = 'Monitoring' as const;
  const id = uuidParam('monitor');
  const page = {
    limit: { description: 'Items per page, 1–100 (default 25).', schema: { type: 'string', pattern: '^[0-9]{1,4}$' } },
    offset: { description: 'Items to skip (default 0).', schema: { type: 'string', pattern: '^[0-9]{1,9}$' } },
  };
  return [
    {
      method: 'POST', path: '/v2/monitor', operationId: 'createMonitor', tag, auth: 'bearer',
      summary: 'Create a monitor: targets checked on a schedule (cron or text, at least 5 minutes apart)', body: { json: 'MonitorCreateRequest' },
      description: 'A schedule firing more often than every 5 minutes, an unknown timezone or schedule text, a search target without a goal: 400 with `details`. Email notifications: 400 FEATURE_NOT_AVAILABLE without an SMTP server; each new recipient is sent a confirmation email (fixed text and its links only) and gets change emails only once it confirmed (`emailRecipientSubscriptions`); more than WDS_MONITOR_MAX_PENDING_RECIPIENTS addresses of the team awaiting confirmation is 429 `PENDING_RECIPIENTS_LIMIT` (as on update). Target `scrapeOptions` are checked against the team\'s features as POST /v2/scrape checks them (zero data retention: 400 `SCRAPE_ZDR_VIOLATION_ERROR`; a feature the team lacks: 403). A team that has its maximum of monitors (WDS_MAX_MONITORS, or its team_limits row): 403 `MONITOR_LIMIT_REACHED`.',
      responses: { ...ok('MonitorResponse'), ...errors(...JSON_BODY, ...AUTHED) },
    },
    {
      method: 'GET', path: '/v2/monitor', operationId: 'listMonitors', tag, auth: 'bearer',
      summary: "The team's monitors, newest first", query: page,
      responses: { ...ok('MonitorListResponse'), ...errors(400, ...AUTHED) },
    },
    {
      method: 'GET', path: '/v2/monitor/:id', operationId: 'getMonitor', tag, auth: 'bearer', summary: 'A monitor', params: id,
      responses: { ...ok('MonitorResponse'), ...errors(400, 404, ...AUTHED) },
    },
    {
      method: 'PATCH', path: '/v2/monitor/:id', operationId: 'updateMonitor', tag, auth: 'bearer', params: id,
      summary: 'Update a monitor; `status` pauses (`paused`) or resumes (`active`) it', body: { json: 'MonitorUpdateRequest' },
      responses: { ...ok('MonitorResponse'), ...errors(...JSON_BODY, 404, ...AUTHED) },
    },
    {
      method: 'DELETE', path: '/v2/monitor/:id', operationId: 'deleteMonitor', tag, auth: 'bearer', summary: 'Delete a monitor (a running check finishes)', params: id,
      responses: { ...ok('MonitorDeletedResponse'), ...errors(...JSON_BODY, 404, ...AUTHED) },
    },
    {
      method: 'POST', path: '/v2/monitor/:id/run', operationId: 'runMonitor', tag, auth: 'bearer', params: id, body: { json: 'MonitorRunRequest' },
      summary: 'Run a check now',
      description: '409 while a check of the monitor runs (`details.checkId` names it) or while the monitor is paused; 503 when the workflow service did not accept the check.',
      responses: { ...ok('MonitorRunResponse'), ...errors(...JSON_BODY, 402, 404, 409, ...AUTHED, JOB_NOT_STARTED) },
    },
    {
      method: 'GET', path: '/v2/monitor/:id/checks', operationId: 'listMonitorChecks', tag, auth: 'bearer', params: id,
      summary: "A monitor's checks, newest first",
      query: { ...page, status: { description: 'Only checks with this status.', schema: { type: 'string' } } },
      responses: { ...ok('MonitorCheckListResponse'), ...errors(400, 404, ...AUTHED) },
    },
    {
      method: 'GET', path: '/v2/monitor/:id/checks/:checkId', operationId: 'getMonitorCheck', tag, auth: 'bearer',
      summary: 'A check with its page results (paginated: `next` is an absolute URL)',
      params: { ...id, checkId: { description: 'The check id.', schema: { type: 'string', format: 'uuid' } } },
      query: {
        limit: page.limit,
        skip: { description: 'Page results to skip (the `next` link sets it).', schema: { type: 'string', pattern: '^[0-9]{1,9}$' } },
        status: { description: 'Only pages with this status: same, new, changed, removed, error.', schema: { type: 'string' } },
      },
      responses: { ...ok('MonitorCheckDetailResponse'), ...errors(400, 404, ...AUTHED) },
    },
    {
      method: 'POST', path: '/v2/monitor/:id/recipients/resend', operationId: 'resendMonitorRecipientConfirmation', tag, auth: 'bearer', params: id,
      summary: "Send another confirmation email to one of the monitor's pending (or unsubscribed) email recipients",
      description: 'At most one confirmation email per address and team every WDS_MONITOR_CONFIRM_RESEND_SECONDS: sooner is 429 `CONFIRMATION_RATE_LIMITED` with `Retry-After`; re-inviting an address whose invitation expired when the team already has WDS_MONITOR_MAX_PENDING_RECIPIENTS addresses awaiting confirmation is 429 `PENDING_RECIPIENTS_LIMIT`. 404 when the address is not a recipient of the monitor; 409 `RECIPIENT_ALREADY_CONFIRMED`.',
      body: { json: 'MonitorRecipientResendRequest' },
      responses: { ...ok('MonitorRecipientResponse'), ...errors(...JSON_BODY, 404, 409, ...AUTHED) },
    },
    ...(['confirm', 'unsubscribe'] as const).flatMap((purpose): ApiRoute[] => {
      const errs = {
        ...Object.fromEntries([400, 404, ...(purpose === 'confirm' ? [410] : [])].map((s) => [s, { json: 'ErrorBody' as const, description: ERROR_TEXT[s]!, html: true }])),
        ...errors(500),
      };
      const what = purpose === 'confirm'
        ? "A recipient's confirmation link (from its confirmation email): the address then gets the team's monitor emails"
        : 'The unsubscribe link of every monitor email: the address gets no more monitor email from the team';
      const common = 'No bearer token: the signed link is the credential. Answers HTML to a browser (Accept: text/html), JSON otherwise. A malformed or tampered token is 400 `INVALID_LINK`; ' +
        (purpose === 'confirm' ? 'an expired one 410 `LINK_EXPIRED`; one replaced by a newer confirmation (or for an address that unsubscribed since) 410 `LINK_SUPERSEDED`; ' : '') +
        'a recipient that no longer exists 404.';
      const query = { token: { description: 'The signed token of the link.', schema: { type: 'string' }, required: true } };
      return [
        {
          method: 'GET', path: `/v2/monitor/email/${purpose}`, operationId: purpose === 'confirm' ? 'showMonitorRecipientConfirmation' : 'showMonitorRecipientUnsubscribe', tag, auth: 'signed-link',
          summary: `${what}: opening it changes nothing (mail scanners open links) and shows what a POST of it does`,
          description: `${common} Before it was followed: \`{action, email, alreadyDone: false, message}\` (a page with a button that posts the URL); after: the POST's answer.`,
          query,
          responses: { 200: { json: 'MonitorRecipientLinkView', description: 'What the link does, or that it was done.', html: true }, ...errs },
        },
        {
          method: 'POST', path: `/v2/monitor/email/${purpose}`, operationId: purpose === 'confirm' ? 'confirmMonitorRecipient' : 'unsubscribeMonitorRecipient', tag, auth: 'signed-link',
          summary: what,
          description: `${common} The body is ignored (the page's form posts none; a mail client's RFC 8058 one-click unsubscribe posts \`List-Unsubscribe=One-Click\`).`,
          query,
          responses: { 200: { json: 'MonitorRecipientLinkResponse', description: 'Done (or already done).', html: true }, ...errs },
        },
      ];
    }),
  ];
}

export const API_ROUTES: ApiRoute[] = [
  {
    method: 'POST', path: '/v2/scrape', operationId: 'scrape', tag: 'Scraping', auth: 'bearer',
    summary: 'Scrape one URL (URL mode) or run catalog calls (catalog mode)',
    description:
      'Catalog mode (a body with `catalog`, or `alexandria` as the JS SDK sends it): 403 unless enabled for the team, 403 `THIRD_PARTY_DATA_TERMS_REQUIRED` ' +
      '(`requiresAction: {type: "accept_terms", terms: <provider>, version, url}`, the object both official SDKs read; accept with `firecrawl/terms/accept`) for a provider whose data terms the team has not accepted; 404 `unknown_provider`; ' +
      '400 when options break the capability\'s schema; 402 `insufficient_credits` (nothing ran); a repeated `x-request-id` replays the stored answer and its ' +
      '`scrape_id`, or answers 409 `duplicate_request` (other calls) / `request_in_flight` (still running), or 503 `request_unresolved` (outcome unknown: retry ' +
      'with the same id), each with `chargeId`. The answer carries the `x-request-id` header (generated when the request had none).',
    body: { json: ['ScrapeRequest', 'ScrapeCatalogRequest'] },
    headers: { 'x-request-id': { description: 'Catalog mode: the idempotency key of the request (echoed back).', schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' } } },
    responses: { ...ok('ScrapeOrCatalogResponse'), ...errors(...JSON_BODY, 402, ...AUTHED, ...JOB_FAILURES) },
  },
  {
    method: 'GET', path: '/v2/scrape/:id', operationId: 'getScrape', tag: 'Scraping', auth: 'bearer',
    summary: "The stored result of one of the team's scrapes", params: uuidParam('scrape'),
    description: 'A failed scrape answers with the status and error body it failed with.',
    responses: { ...ok('ScrapeStatusResponse'), ...errors(400, 413, 415, ...AUTHED, ...JOB_FAILURES) },
  },
  {
    method: 'POST', path: '/v2/scrape/:id/interact', operationId: 'interactWithScrape', tag: 'Scraping', auth: 'bearer',
    summary: 'Run Playwright code or a prompt on the live page of a scrape', params: uuidParam('scrape'), body: { json: 'InteractRequest' },
    description:
      'The first call continues from the page the scrape rendered if its browser worker still holds it, else replays the scrape ' +
      '(its stored request) in a new browser session; later calls reuse that session until DELETE or the idle timeout. ' +
      'The code\'s own exception or timeout is a 200 with `success: false`. 403: a zero-data-retention or lockdown scrape (nothing to replay); ' +
      '404: no such scrape for this team (another team\'s scrape id too); 409: the session is running another call, the scrape is still running, ' +
      'or its profile has another saving session; 410: the scrape is older than the interact window; 429: the team\'s concurrency limit is held; ' +
      '502: the page crashed or its browser worker went away (the next call replays); 503: no browser worker.',
    responses: { ...ok('InteractResponse'), ...errors(...JSON_BODY, 402, 404, 408, 409, 410, ...AUTHED, 502, 503, 504) },
  },
  {
    method: 'DELETE', path: '/v2/scrape/:id/interact', operationId: 'stopInteraction', tag: 'Scraping', auth: 'bearer',
    summary: 'End the interact session of a scrape (saving its profile when `saveChanges`)', params: uuidParam('scrape'),
    description: '404: no such scrape, or it never had a session; 410: its session has already ended (idle timeout, worker gone).',
    responses: { ...ok('InteractStopResponse'), ...errors(...JSON_BODY, 404, 409, 410, ...AUTHED, 502, 503, 504) },
  },
  {
    method: 'POST', path: '/v2/crawl', operationId: 'crawl', tag: 'Crawling', auth: 'bearer',
    summary: 'Start a crawl', body: { json: 'CrawlRequest' },
    description: 'With `prompt`, the options are first derived as by POST /v2/crawl/params-preview (the request\'s own fields win), which can answer 408 or 422.',
    responses: { ...ok('JobStartedResponse'), ...errors(...JSON_BODY, 402, ...AUTHED, JOB_NOT_STARTED, 404, 408, 409, 422, 502, 504) },
  },
  {
    method: 'GET', path: '/v2/crawl/active', operationId: 'getActiveCrawls', tag: 'Crawling', auth: 'bearer',
    summary: "The team's running crawls", responses: { ...ok('ActiveCrawlsResponse'), ...errors(...AUTHED) },
  },
  {
    method: 'GET', path: '/v2/crawl/ongoing', operationId: 'getOngoingCrawls', tag: 'Crawling', auth: 'bearer',
    summary: "The team's running crawls (Firecrawl's older name of /v2/crawl/active)", responses: { ...ok('ActiveCrawlsResponse'), ...errors(...AUTHED) },
  },
  {
    method: 'POST', path: '/v2/crawl/params-preview', operationId: 'crawlParamsPreview', tag: 'Crawling', auth: 'bearer',
    summary: 'Crawl options from a prompt', body: { json: 'CrawlParamsPreviewRequest' },
    description: 'One model step on a worker turns the prompt into crawl options, validated by the crawl schema. Without an LLM configured: 400 FEATURE_NOT_AVAILABLE; options the schema refuses after one repair: 422; the provider failing past the budget: 408.',
    responses: { ...ok('CrawlParamsPreviewResponse'), ...errors(...JSON_BODY, ...AUTHED, ...JOB_FAILURES) },
  },
  ...jobRoutes('crawl'),
  {
    method: 'POST', path: '/v2/batch/scrape', operationId: 'batchScrape', tag: 'Scraping', auth: 'bearer',
    summary: 'Start a batch scrape', body: { json: 'BatchScrapeRequest' },
    headers: { 'x-idempotency-key': { description: 'A repeated request with the same key answers with the first job.', schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' } } },
    responses: { ...ok('BatchStartedResponse'), ...errors(...JSON_BODY, 402, ...AUTHED, JOB_NOT_STARTED) },
  },
  ...jobRoutes('batch'),
  {
    method: 'POST', path: '/v2/map', operationId: 'map', tag: 'Mapping', auth: 'bearer',
    summary: "A site's URLs", body: { json: 'MapRequest' },
    responses: { ...ok('MapResponse'), ...errors(...JSON_BODY, 402, ...AUTHED, ...JOB_FAILURES) },
  },
  {
    method: 'POST', path: '/v2/extract', operationId: 'extract', tag: 'Extraction', auth: 'bearer',
    summary: 'Start an extract: one answer, conforming to a schema, from many pages (deprecated upstream in favour of /v2/agent)',
    description:
      'URLs ending in a wildcard (`https://site/*`) expand through map. Answers carry `Deprecation: true` and ' +
      '`Link: </v2/agent>; rel="successor-version"`. An invalid JSON Schema is 422 LLM_INVALID_SCHEMA; without an LLM configured 400 FEATURE_NOT_AVAILABLE.',
    body: { json: 'ExtractRequest' },
    responses: { ...ok('ExtractStartedResponse'), ...errors(...JSON_BODY, 402, 422, ...AUTHED, JOB_NOT_STARTED) },
  },
  {
    method: 'GET', path: '/v2/extract/:id', operationId: 'getExtractStatus', tag: 'Extraction', auth: 'bearer',
    summary: 'Status and answer of an extract', params: uuidParam('extract'),
    description: '`data` is [] while processing (as upstream); `creditsUsed` is live.',
    responses: { ...ok('ExtractStatusResponse'), ...errors(400, 404, ...AUTHED) },
  },
  {
    method: 'POST', path: '/v2/search', operationId: 'search', tag: 'Search', auth: 'bearer',
    summary: 'Search the web (SearXNG) or the pages this deployment stored, optionally scraping every result',
    description: 'Providers by WDS_SEARCH_PROVIDER. 408 when the provider does not answer within `timeout`; 502 when SearXNG fails (a 403 from it: its JSON format is disabled).',
    body: { json: 'SearchRequest' },
    responses: { ...ok('SearchResponse'), ...errors(...JSON_BODY, 402, ...AUTHED, 408, 502, JOB_NOT_STARTED) },
  },
  {
    method: 'POST', path: '/v2/parse', operationId: 'parse', tag: 'Parsing', auth: 'bearer',
    summary: 'Convert an uploaded file (PDF, DOCX, HTML, text, image) to a document',
    body: { multipart: { file: 'PDF, DOCX, HTML, text/markdown or an image (PNG, JPEG, WebP, TIFF, GIF, BMP).', options: 'ParseOptions' } },
    responses: { ...ok('ParseResponse'), ...errors(...JSON_BODY, 402, ...AUTHED, ...JOB_FAILURES) },
  },
  {
    method: 'GET', path: '/v2/parse/formats', operationId: 'getParseFormats', tag: 'Parsing', auth: 'bearer',
    summary: 'The file formats POST /v2/parse accepts, with extensions and MIME types',
    description: 'Built from the rules /v2/parse detects uploads by. Image formats are OCR\'d on the workers and listed `available: true` (WDS ships tesseract). `Cache-Control: private, max-age=3600`.',
    responses: { ...ok('ParseFormatsResponse'), ...errors(...AUTHED) },
  },
  ...agentRoutes(),
  ...monitorRoutes(),
  {
    method: 'GET', path: '/v2/team/credit-usage', operationId: 'getCreditUsage', tag: 'Account', auth: 'bearer',
    summary: "The team's remaining credits", responses: { ...ok('CreditUsageResponse'), ...errors(...AUTHED) },
  },
  {
    method: 'GET', path: '/v2/team/token-usage', operationId: 'getTokenUsage', tag: 'Account', auth: 'bearer',
    summary: "The team's remaining credits in extract tokens",
    description: 'The credit balance of /v2/team/credit-usage times 15 (extract bills 15 tokens a credit); without a credit limit, 99999999 less the tokens used.',
    responses: { ...ok('TokenUsageResponse'), ...errors(...AUTHED) },
  },
  {
    method: 'GET', path: '/v2/team/queue-status', operationId: 'getQueueStatus', tag: 'Account', auth: 'bearer',
    summary: "The team's running and waiting jobs", responses: { ...ok('QueueStatusResponse'), ...errors(...AUTHED) },
  },
  {
    method: 'GET', path: '/v2/concurrency-check', operationId: 'getConcurrency', tag: 'Account', auth: 'bearer',
    summary: "The team's concurrency use and limit", responses: { ...ok('ConcurrencyCheckResponse'), ...errors(...AUTHED) },
  },
  {
    method: 'GET', path: '/v2/files/*', operationId: 'getFile', tag: 'Scraping', auth: 'signed-link',
    summary: 'A stored screenshot, action PDF, audio or video file (the signed link a document carries)',
    description: 'No bearer token: the link is the credential. The path may contain slashes.',
    params: { '*': { description: 'The file key, as in the signed link.', schema: { type: 'string' } } },
    query: {
      expires: { description: 'Expiry (Unix seconds), part of the signed link.', schema: { type: 'string' } },
      sig: { description: 'Signature, part of the signed link.', schema: { type: 'string' } },
    },
    responses: {
      200: { binary: ['image/png', 'image/jpeg', 'application/pdf', 'audio/mpeg', 'video/mp4', 'video/webm'], description: 'The file.' },
      ...errors(403, 404, 410, 500),
    },
  },
  {
    method: 'GET', path: '/v2/openapi.json', operationId: 'getOpenApi', tag: 'Operations', auth: 'none',
    summary: 'This document', responses: ok('OpenApiDocument', 'The OpenAPI 3.1 document of this API.'),
  },
  {
    method: 'GET', path: '/docs', operationId: 'getDocs', tag: 'Operations', auth: 'none',
    summary: 'This reference as a web page (Swagger UI, served by the API itself: no CDN)',
    responses: { 200: { text: 'text/html', description: 'The page; it loads its script and style sheet from `/docs/{asset}` and the document from `/v2/openapi.json`.' } },
  },
  {
    method: 'GET', path: '/docs/:asset', operationId: 'getDocsAsset', tag: 'Operations', auth: 'none',
    summary: "The reference page's script and style sheet",
    params: { asset: { description: 'One of the files the page loads.', schema: { type: 'string', enum: [...DOCS_ASSETS] } } },
    responses: { 200: { binary: ['text/javascript', 'text/css'], description: 'The file.' }, ...errors(404) },
  },
  {
    method: 'GET', path: '/health', operationId: 'health', tag: 'Operations', auth: 'none',
    summary: 'Liveness', responses: ok('HealthResponse'),
  },
  {
    method: 'GET', path: '/ready', operationId: 'ready', tag: 'Operations', auth: 'none',
    summary: 'Readiness: Postgres and Temporal reachable',
    responses: { ...ok('ReadyResponse', 'Ready.'), 503: { json: 'ReadyResponse', description: 'Postgres or Temporal is not reachable.' } },
  },
  {
    method: 'GET', path: '/metrics', operationId: 'metrics', tag: 'Operations', auth: 'none',
    summary: 'Prometheus metrics of this API process (keep it off the public network)',
    responses: { 200: { text: 'text/plain', description: 'Prometheus text exposition format.' } },
  },
];
