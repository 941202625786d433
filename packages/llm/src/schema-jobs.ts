import type { Draft } from './schema-compile';

/** Messages between `schema-pool.ts` and a schema thread (`schema-thread.ts`). */
export type SchemaJob =
  | { id: number; kind: 'compile'; key: string; schema: unknown }
  | { id: number; kind: 'validate'; key: string; schema: unknown; data: unknown };

export type SchemaReply =
  | { id: number; ok: true; draft: Draft }
  | { id: number; ok: true; valid: true }
  | { id: number; ok: true; valid: false; errors: string[] }
  /** The schema does not compile: the INVALID_SCHEMA error's message and details. */
  | { id: number; ok: false; message: string; details?: unknown };

export type SchemaThreadMessage = SchemaReply | { ready: true };
