/**
 * A schema thread: compiles users' JSON Schemas and validates data against them (schema-pool.ts
 * sends the jobs). Whatever a schema and its data make ajv do, it happens here, where the pool
 * can terminate it at the deadline, never on the event loop of the API or a worker.
 */
import { parentPort } from 'node:worker_threads';
import { isLlmError } from './errors';
import { compileSchemaFunction, formatErrors, type SchemaFunction } from './schema-compile';
import type { SchemaJob, SchemaReply } from './schema-jobs';

const port = parentPort;
if (!port) throw new Error('schema-thread.ts must run in a worker thread');

/** Compiled schemas by content key, least recently used first. */
const compiled = new Map<string, SchemaFunction>();
const CACHE_SIZE = 128;

function compiledFor(key: string, schema: unknown): SchemaFunction {
  const hit = compiled.get(key);
  if (hit) {
    compiled.delete(key);
    compiled.set(key, hit);
    return hit;
  }
  const c = compileSchemaFunction(schema);
  compiled.set(key, c);
  if (compiled.size > CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
  return c;
}

function answer(job: SchemaJob): SchemaReply {
  try {
    const c = compiledFor(job.key, job.schema);
    if (job.kind === 'compile') return { id: job.id, ok: true, draft: c.draft };
    return c.fn(job.data) ? { id: job.id, ok: true, valid: true } : { id: job.id, ok: true, valid: false, errors: formatErrors(c.fn.errors) };
  } catch (e) {
    if (isLlmError(e)) return { id: job.id, ok: false, message: e.message, details: e.details };
    const why = e instanceof Error ? e.message : String(e);
    // Data nested past the stack (a recursive schema over deep data) fails validation; it is not the schema's fault.
    if (job.kind === 'validate') return { id: job.id, ok: true, valid: false, errors: [`(root) could not be validated: ${why}`] };
    return { id: job.id, ok: false, message: `Invalid JSON Schema: ${why}` };
  }
}

port.on('message', (job: SchemaJob) => port.postMessage(answer(job)));
port.postMessage({ ready: true });
