import { randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseBody, parseOptionsSchema, parseUnsupportedOption, unavailableParseFeatures, type ParseOptions } from '@wds/contracts';
import { deleteParseJob, insertParseJob, loadParseResult } from '@wds/db';
import { WdsError } from '@wds/errors';
import { detectDocument, parseFormats } from '@wds/documents';
import { validateSelectors } from '@wds/transform';
import type { ApiDeps } from '../../deps';
import { noteLogIds } from '../../logging';
import { requireScope } from '../../middleware/auth';
import { checkTeamFeatures } from '../../services/team-features';
import { runJob } from '../../services/jobs';
import { parseJob } from '@wds/workflows/job-specs';

/**
 * POST /v2/parse: a multipart upload (`file`, optional JSON `options`, as Firecrawl's docs and
 * the JS SDK's parse() send them) → a scrape-shaped document. The API validates and stores the
 * upload in Postgres; a parseWorkflow converts it on a worker (ids cross Temporal, never bytes).
 */
export interface ParseConfig {
  /** Largest uploaded file (WDS_MAX_UPLOAD_BYTES); above it 413. */
  maxUploadBytes: number;
}

/** Bytes a request may carry beyond the file: the options part (≤ 1 MiB) and multipart framing. */
const OPTIONS_MAX_BYTES = 1024 * 1024;
const OVERHEAD_BYTES = OPTIONS_MAX_BYTES + 64 * 1024;
const SUPPORTED = 'Supported: PDF, DOCX, HTML, plain text / markdown, images (PNG, JPEG, WebP, TIFF, GIF, BMP).';

/** A refusal of the upload's framing: its sentence is the `error` (as Firecrawl words its multipart refusals), the field in `details`. */
const badRequest = (path: string[], message: string, code = 'invalid_value', reason = message) => new WdsError('BAD_REQUEST', { message, details: [{ code, path, message: reason }] });
const tooLarge = (max: number) => new WdsError('PAYLOAD_TOO_LARGE', { details: { maxUploadBytes: max }, code: 'UPLOAD_TOO_LARGE' });

interface Upload {
  bytes: Buffer;
  filename: string;
  mimetype: string;
  /** The `options` part: its text, or already JSON when the part said `Content-Type: application/json`. */
  optionsRaw?: unknown;
}

/** The parse route in its own scope: the multipart parser exists only here (every other route stays JSON-only). */
export function parseRoutes(deps: ApiDeps, cfg: ParseConfig) {
  return async (scope: FastifyInstance) => {
    await scope.register(multipart, {
      // files: 2 — an options part sent with a type arrives as a file part too; readUpload still takes one upload.
      limits: { fileSize: cfg.maxUploadBytes, files: 2, fields: 4, parts: 6, fieldSize: OPTIONS_MAX_BYTES, headerPairs: 100 },
      throwFileSizeLimit: true,
    });
    // Any other body type reaches the controller unread, which answers with a parse-specific 400.
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    scope.post('/parse', parseController(deps, cfg));
    scope.get('/parse/formats', formatsController());
  };
}

/** GET /v2/parse/formats: one list per process; the workers run OCR (tesseract), so image formats are available. */
function formatsController() {
  const body = { success: true, data: { formats: parseFormats().map((f) => ({ ...f, available: true })) } };
  return async (_req: FastifyRequest, reply: FastifyReply) => reply.header('cache-control', 'private, max-age=3600').send(body);
}

function parseController(deps: ApiDeps, cfg: ParseConfig) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    requireScope(req, 'parse');
    const upload = await readUpload(req, cfg.maxUploadBytes);
    const o = validateOptions(upload.optionsRaw);
    if (o.auditMetadata) req.auditMetadata = o.auditMetadata;
    const unsupported = parseUnsupportedOption(o);
    if (unsupported) throw new WdsError('BAD_REQUEST', { code: 'PARSE_UNSUPPORTED_OPTIONS', message: unsupported });
    validateSelectors(o.includeTags, 'includeTags');
    validateSelectors(o.excludeTags, 'excludeTags');
    checkTeamFeatures(req.auth, o);
    // Model-made formats of uploads are not wired to the parse workflow yet, whatever the deployment.
    const missing = unavailableParseFeatures(o, { llm: { ok: false, message: 'model-made formats are not built for POST /v2/parse yet' } });
    if (missing.length) {
      throw new WdsError('FEATURE_NOT_AVAILABLE', { message: missing.map((m) => m.message).join(' '), code: 'FEATURE_NOT_AVAILABLE', details: missing });
    }
    // Magic bytes are cheap to read: refuse what no converter takes before storing anything.
    const detected = detectDocument(upload.bytes, upload.filename, upload.mimetype);
    if (detected.kind === 'unsupported' && !detected.mismatch) {
      throw new WdsError('UNSUPPORTED_MEDIA_TYPE', {
        code: 'UNSUPPORTED_FILE_TYPE',
        message: `Unsupported Media Type: ${detected.reason ?? 'the file type is not supported'}. ${SUPPORTED}`,
      });
    }

    const jobId = randomUUID();
    noteLogIds(req, { jobId });
    const contentType = upload.mimetype && upload.mimetype !== 'application/octet-stream' ? upload.mimetype : null;
    await insertParseJob(deps.db, { id: jobId, teamId: req.auth.teamId, filename: upload.filename || null, contentType, upload: upload.bytes, options: o });
    let row: Awaited<ReturnType<typeof loadParseResult>>;
    try {
      await runJob(deps, parseJob, { jobId, args: [{ jobId, timeoutMs: o.timeout }], timeoutMs: o.timeout, graceMs: 5_000 });
      row = await loadParseResult(deps.db, req.auth.teamId, jobId);
    } finally {
      // Zero data retention: nothing of the upload or its result stays, whatever the outcome.
      if (o.zeroDataRetention) await deleteParseJob(deps.db, jobId);
    }
    if (!row?.document) throw new WdsError('INTERNAL', { code: 'UNKNOWN_ERROR', message: 'Internal Server Error: the parse finished without a document' });
    return reply.send({ success: true, data: row.document });
  };
}

/** Reads the multipart body: exactly one `file` part (with a file name) and at most one `options` part. */
async function readUpload(req: FastifyRequest, maxUploadBytes: number): Promise<Upload> {
  if (!req.isMultipart()) {
    throw new WdsError('BAD_REQUEST', {
      message: 'Invalid multipart form-data request: send Content-Type multipart/form-data with a "file" part and an optional "options" JSON part.',
      code: 'BAD_REQUEST',
    });
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxUploadBytes + OVERHEAD_BYTES) {
    drain(req);
    throw tooLarge(maxUploadBytes);
  }
  let file: Omit<Upload, 'optionsRaw'> | undefined;
  let optionsRaw: unknown;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file' && part.fieldname === 'options') {
        // An options part with a filename or a non-text type (a Blob, curl's `;type=application/json`) reaches us as a file: its bytes are the options text.
        if (optionsRaw !== undefined) throw badRequest(['options'], 'Send the options part once.');
        const bytes = await part.toBuffer();
        if (bytes.length > OPTIONS_MAX_BYTES) throw badRequest(['options'], 'The options part is larger than 1 MiB.');
        optionsRaw = bytes.toString('utf8');
      } else if (part.type === 'file') {
        if (part.fieldname !== 'file') throw badRequest([part.fieldname], `Unexpected file part '${part.fieldname}': the upload goes in the part named 'file'.`, 'unrecognized_keys');
        if (file) throw badRequest(['file'], 'Send exactly one file per request.');
        file = { bytes: await part.toBuffer(), filename: part.filename ?? '', mimetype: part.mimetype ?? '' };
      } else if (part.fieldname === 'options') {
        if (optionsRaw !== undefined) throw badRequest(['options'], 'Send the options part once.');
        // @fastify/multipart has parsed a field part sent as application/json already.
        optionsRaw = part.value ?? '';
      } else if (part.fieldname === 'file') {
        throw badRequest(['file'], "The 'file' part must be a file upload (a part with a filename).", 'invalid_type');
      } else {
        throw badRequest([part.fieldname], `Unrecognized part '${part.fieldname}': expected 'file' and 'options'.`, 'unrecognized_keys');
      }
    }
  } catch (e) {
    drain(req);
    throw multipartError(e, maxUploadBytes);
  }
  if (!file) throw badRequest(['file'], "A file is required: send it as the multipart part named 'file'.", 'invalid_type');
  if (!file.bytes.length) throw badRequest(['file'], 'The uploaded file is empty.');
  return { ...file, optionsRaw };
}

/** Discards the rest of a request we stopped reading, so the client gets the answer instead of a stalled upload. */
function drain(req: FastifyRequest) {
  req.raw.unpipe();
  req.raw.resume();
}

function multipartError(e: unknown, maxUploadBytes: number): WdsError {
  if (e instanceof WdsError) return e;
  const code = (e as { code?: string })?.code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(maxUploadBytes);
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return badRequest([], "Too many parts: send one 'file' part and at most one 'options' part.");
  }
  if (code === 'FST_PROTO_VIOLATION') return badRequest([], 'Invalid multipart part name.');
  if (code === 'FST_INVALID_JSON_FIELD_ERROR') return invalidOptionsJson('the part is declared application/json but is not valid JSON');
  const message = (e as Error)?.message ?? 'malformed body';
  // busboy reports a field above fieldSize as truncated rather than failing; anything else is a malformed body.
  return new WdsError('BAD_REQUEST', { message: `Invalid multipart form-data request: ${message}`, code: 'BAD_REQUEST' });
}

const invalidOptionsJson = (reason: string) => badRequest(['options'], "Invalid JSON in the 'options' field. Provide a valid JSON string.", 'invalid_json', reason);

function validateOptions(raw: unknown): ParseOptions {
  let value: unknown = raw ?? {};
  if (typeof raw === 'string') {
    value = {};
    if (raw.trim() !== '') {
      try {
        value = JSON.parse(raw);
      } catch (e) {
        throw invalidOptionsJson((e as Error).message);
      }
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest(['options'], "The 'options' field must parse to a JSON object.", 'invalid_type');
  const r = parseBody(parseOptionsSchema, value);
  if (r.ok) return r.data;
  throw new WdsError('BAD_REQUEST', { details: r.details.map((d) => ({ ...d, path: ['options', ...d.path] })) });
}
