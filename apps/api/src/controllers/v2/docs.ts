import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DOCS_ASSETS, type DocsAsset } from '@wds/contracts';
import { WdsError } from '@wds/errors';

/**
 * GET /docs (no auth): the API reference as a web page, Swagger UI (swagger-ui-dist, Apache-2.0)
 * rendering `GET /v2/openapi.json`. Everything it loads comes from this API (deployments may have
 * no internet, and a CDN would see who reads the docs): the content security policy allows this
 * origin only, and the online spec validator is switched off.
 */

const dist = (createRequire(import.meta.url)('swagger-ui-dist') as { getAbsoluteFSPath(): string }).getAbsoluteFSPath();

const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '/v2/openapi.json', dom_id: '#wds-docs', deepLinking: true, validatorUrl: null });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>WDS API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<noscript>This page needs JavaScript. The document it renders is <a href="/v2/openapi.json">/v2/openapi.json</a>.</noscript>
<div id="wds-docs"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

const ASSETS: Record<DocsAsset, { type: string; body: () => string | Buffer }> = {
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', body: () => readFileSync(join(dist, 'swagger-ui-bundle.js')) },
  'swagger-ui.css': { type: 'text/css; charset=utf-8', body: () => readFileSync(join(dist, 'swagger-ui.css')) },
  'init.js': { type: 'text/javascript; charset=utf-8', body: () => INIT },
};

// Swagger UI styles elements inline and draws icons as data: URIs; nothing else is allowed.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function docsPageController() {
  return async (_req: FastifyRequest, reply: FastifyReply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').send(PAGE);
}

/** GET /docs/:asset: read from swagger-ui-dist on first use (1.9 MB; an API that never serves the page never reads them). */
export function docsAssetController() {
  const cache = new Map<DocsAsset, string | Buffer>();
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const name = (req.params as { asset: string }).asset as DocsAsset;
    if (!(DOCS_ASSETS as readonly string[]).includes(name)) throw new WdsError('NOT_FOUND', { message: 'Not Found: the API reference has no such file.' });
    let body = cache.get(name);
    if (body === undefined) cache.set(name, (body = ASSETS[name].body()));
    return reply.type(ASSETS[name].type).header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').send(body);
  };
}
