import { appendFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiPath, type OpenApiDocument } from '@wds/contracts';

/**
 * The test suite's guard against drift between the API and `GET /v2/openapi.json`: with
 * WDS_RESPONSE_CHECK_FILE set (the test harness sets it for every API it starts), every
 * response — its route, status, media type and JSON body — and every WebSocket message is
 * checked against the generated document, and so is the set of registered routes. Mismatches
 * are appended to that file as JSON lines; the harness fails the test file when it stops the
 * stack. Off in production: it costs a validation per response.
 */
export interface Mismatch {
  method: string;
  url: string;
  status?: number;
  problem: string;
  errors?: string[];
}

interface Answer {
  method: string;
  /** The matched route pattern (Fastify syntax); undefined when no route matched (404). */
  route: string | undefined;
  status: number;
  contentType: string | undefined;
  /** The JSON text sent, or undefined for streams and empty bodies. */
  body: string | undefined;
}

const ID = 'wds-openapi';

export class ResponseChecker {
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, logger: false }));
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: OpenApiDocument) {
    // Component schemas refer to each other as `#/components/schemas/X`: resolved inside this wrapper.
    this.ajv.addSchema({ $id: ID, components: doc.components });
  }

  private validator(schema: Record<string, unknown>): ValidateFunction {
    const key = JSON.stringify(schema);
    let v = this.compiled.get(key);
    if (!v) {
      const target = typeof schema.$ref === 'string' && schema.$ref.startsWith('#') ? { $ref: `${ID}${schema.$ref}` } : schema;
      v = this.ajv.compile(target);
      this.compiled.set(key, v);
    }
    return v;
  }

  /** Problems of one value against a component schema (`ErrorBody`, `JobStreamMessage`, …). */
  validateComponent(name: string, value: unknown): string[] {
    return this.run(this.validator({ $ref: `#/components/schemas/${name}` }), value);
  }

  private run(v: ValidateFunction, value: unknown): string[] {
    if (v(value)) return [];
    return (v.errors ?? []).slice(0, 10).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }

  /** Why an answer does not match the document (null when it does). */
  check(a: Answer): Omit<Mismatch, 'method' | 'url'> | null {
    if (a.method === 'HEAD' || a.method === 'OPTIONS') return null;
    const mediaType = a.contentType?.split(';')[0]!.trim().toLowerCase();
    let content: Record<string, { schema?: Record<string, unknown> }> | undefined;
    if (a.route === undefined) {
      // No route matched: the not-found handler's error body.
      if (a.status !== 404) return { status: a.status, problem: 'a request without a route was answered with a status other than 404' };
      content = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } };
    } else {
      const op = this.doc.paths[openApiPath(a.route)]?.[a.method.toLowerCase()] as { responses?: Record<string, { content?: typeof content }> } | undefined;
      if (!op) return { status: a.status, problem: `route ${a.method} ${a.route} is not in the OpenAPI document` };
      const response = op.responses?.[String(a.status)];
      if (!response) return { status: a.status, problem: `status ${a.status} is not documented for ${a.method} ${openApiPath(a.route)}` };
      content = response.content;
    }
    if (!content) return a.body ? { status: a.status, problem: 'a body was sent where the document declares none' } : null;
    if (!mediaType || !content[mediaType]) {
      return { status: a.status, problem: `media type ${mediaType ?? '(none)'} is not documented (documented: ${Object.keys(content).join(', ')})` };
    }
    if (mediaType !== 'application/json') return null;
    let value: unknown;
    try {
      value = JSON.parse(a.body ?? '');
    } catch {
      return { status: a.status, problem: 'the body is not JSON' };
    }
    const errors = this.run(this.validator(content[mediaType]!.schema ?? {}), value);
    return errors.length ? { status: a.status, problem: 'the body does not match its schema', errors } : null;
  }

  /** Routes registered but not documented, and documented but not registered. */
  checkRoutes(registered: { method: string; url: string }[]): string[] {
    const seen = new Set<string>();
    const problems: string[] = [];
    for (const r of registered) {
      if (r.method === 'HEAD' || r.method === 'OPTIONS') continue;
      const key = `${r.method.toLowerCase()} ${openApiPath(r.url)}`;
      seen.add(key);
      if (!this.doc.paths[openApiPath(r.url)]?.[r.method.toLowerCase()]) problems.push(`route ${r.method} ${r.url} is registered but not in the OpenAPI document`);
    }
    for (const [path, ops] of Object.entries(this.doc.paths)) {
      for (const method of Object.keys(ops)) {
        if (!seen.has(`${method} ${path}`)) problems.push(`route ${method.toUpperCase()} ${path} is in the OpenAPI document but not registered`);
      }
    }
    return problems;
  }
}

/** Appends mismatches to `file` (one JSON line each). */
export function fileRecorder(file: string): (m: Mismatch) => void {
  return (m) => appendFileSync(file, `${JSON.stringify(m)}\n`);
}

/**
 * Installs the check on an app before its routes are registered (onRoute sees them all). Returns
 * the WebSocket message check for the job streams.
 */
export function installResponseCheck(app: FastifyInstance, doc: OpenApiDocument, record: (m: Mismatch) => void): (message: unknown) => void {
  const checker = new ResponseChecker(doc);
  const routes: { method: string; url: string }[] = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method, url: r.url });
  });
  app.addHook('onReady', async () => {
    for (const problem of checker.checkRoutes(routes)) record({ method: '-', url: '-', problem });
  });
  app.addHook('onSend', async (req, reply, payload) => {
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    const ct = reply.getHeader('content-type');
    const m = checker.check({
      method: req.method,
      route: req.routeOptions.url,
      status: reply.statusCode,
      contentType: typeof ct === 'string' ? ct : undefined,
      body: body || undefined,
    });
    if (m) record({ method: req.method, url: req.url.split('?')[0]!, ...m });
    return payload;
  });
  return (message) => {
    const errors = checker.validateComponent('JobStreamMessage', message);
    if (errors.length) record({ method: 'WS', url: '-', problem: 'a WebSocket message does not match JobStreamMessage', errors });
  };
}
