import { z } from 'zod';
import { API_ROUTES, REQUEST_SCHEMAS, RESPONSE_SCHEMAS, type ApiRoute, type RouteResponse } from './api-routes';
import { httpUrl } from './scrape';
import { V1_ROUTES } from './v1-routes';

/**
 * `GET /v2/openapi.json`: an OpenAPI 3.1 document built from the zod schemas that validate
 * requests and describe responses, and the route table (api-routes.ts). Nothing in it is
 * written by hand. zod 4's own `z.toJSONSchema` does the conversion (JSON Schema 2020-12, the
 * dialect of OpenAPI 3.1): request bodies as zod reads them (io "input": defaults optional),
 * responses as the API writes them (io "output"). Refinements (cross-field rules, URL and
 * regex checks) have no JSON Schema form and stay in zod only.
 */

type JsonObject = Record<string, unknown>;
export interface OpenApiDocument {
  openapi: string;
  info: JsonObject;
  paths: Record<string, Record<string, JsonObject>>;
  components: { schemas: Record<string, JsonObject>; securitySchemes: JsonObject };
  [key: string]: unknown;
}

const REF = '#/components/schemas/';

/** Fastify's route syntax → OpenAPI's: `:id` → `{id}`, the wildcard `*` → `{path}`. */
export function openApiPath(route: string): string {
  return route.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}');
}

/**
 * What a refinement checks, said in JSON Schema where it can be: `url` fields must be absolute
 * http(s) URLs (zod trims first, hence the leading blanks).
 */
function override(ctx: { zodSchema: unknown; jsonSchema: JsonObject }) {
  if (ctx.zodSchema === httpUrl) Object.assign(ctx.jsonSchema, { format: 'uri', pattern: '^\\s*[Hh][Tt][Tt][Pp][Ss]?://[^/?#\\s]' });
}

function toComponents(schemas: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, JsonObject> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, {
    target: 'draft-2020-12', io, unrepresentable: 'any', uri: (id) => `${REF}${id}`, override: override as never,
  });
  const components: Record<string, JsonObject> = {};
  for (const [id, schema] of Object.entries(out.schemas)) {
    const { $schema: _s, $id: _i, ...rest } = schema as JsonObject;
    components[id] = rest;
  }
  return components;
}

const ref = (name: string) => ({ $ref: `${REF}${name}` });

function responseObject(r: RouteResponse): JsonObject {
  if ('json' in r) return { description: r.description, content: { 'application/json': { schema: ref(r.json) }, ...(r.html ? { 'text/html': { schema: { type: 'string' } } } : {}) } };
  if ('text' in r) return { description: r.description, content: { [r.text]: { schema: { type: 'string' } } } };
  return {
    description: r.description,
    content: Object.fromEntries(r.binary.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }])),
  };
}

function requestBody(body: NonNullable<ApiRoute['body']>): JsonObject {
  if ('json' in body) {
    const names = Array.isArray(body.json) ? body.json : [body.json];
    const schema = names.length === 1 ? ref(names[0]!) : { anyOf: names.map(ref) };
    return { required: true, content: { 'application/json': { schema } } };
  }
  return {
    required: true,
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          required: ['file'],
          properties: {
            file: { type: 'string', contentMediaType: 'application/octet-stream', description: body.multipart.file },
            options: ref(body.multipart.options),
          },
          additionalProperties: false,
        },
        encoding: { options: { contentType: 'application/json' } },
      },
    },
  };
}

function operation(route: ApiRoute): JsonObject {
  const parameters = [
    ...Object.entries(route.params ?? {}).map(([name, p]) => ({
      name: name === '*' ? 'path' : name, in: 'path', required: true, description: p.description, schema: p.schema,
    })),
    ...Object.entries(route.query ?? {}).map(([name, p]) => ({ name, in: 'query', required: p.required ?? false, description: p.description, schema: p.schema })),
    ...Object.entries(route.headers ?? {}).map(([name, p]) => ({ name, in: 'header', required: false, description: p.description, schema: p.schema })),
  ];
  const op: JsonObject = {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    security: route.auth === 'bearer' ? [{ bearerAuth: [] }] : [],
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: requestBody(route.body) } : {}),
    responses: Object.fromEntries(Object.entries(route.responses).map(([status, r]) => [status, responseObject(r)])),
  };
  if (route.websocket) {
    op['x-websocket'] = { description: route.websocket.description, message: ref(route.websocket.message) };
  }
  return op;
}

export function buildOpenApiDocument(routes: readonly ApiRoute[] = [...API_ROUTES, ...V1_ROUTES]): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const p = (paths[openApiPath(route.path)] ??= {});
    p[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'WDS API',
      version: 'v2',
      description:
        "A self-hosted web data service, wire-compatible with Firecrawl's public v2 API, and its v1 API as adapters over v2 (the /v1 paths). Generated from the zod " +
        'schemas the API validates with (packages/contracts). Every non-2xx answer carries the ErrorBody.',
    },
    tags: ['Scraping', 'Crawling', 'Mapping', 'Search', 'Extraction', 'Parsing', 'Agent', 'Account', 'Operations'].map((name) => ({ name })),
    paths,
    components: {
      schemas: { ...toComponents(REQUEST_SCHEMAS, 'input'), ...toComponents(RESPONSE_SCHEMAS, 'output') },
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (`npm run keys -- create`).' } },
    },
  };
}

let cached: string | undefined;
/** The document as JSON text, built once per process. */
export function openApiJson(): string {
  return (cached ??= JSON.stringify(buildOpenApiDocument()));
}
