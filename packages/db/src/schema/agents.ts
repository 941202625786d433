import { bigserial, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { jobs } from './jobs';

/**
 * Agent jobs (POST /v2/agent): every run is a `jobs` row of kind `agent` (status, outcome, options,
 * error, credits, times, expiry) and this extension. A root is the job a client started (root_id =
 * id, parent_id null); a sub-agent is a run it spawned (root_id = the job, parent_id = its spawner;
 * its job row's parent_id is the root, so it goes with it). Threads: every root belongs to one
 * (thread_id, thread_turn); a follow-up turn names the thread. The run's state word (running,
 * cancelling, succeeded, cancelled, credit_limit_reached, refused, parent_finished, internal) is its
 * job's status and outcome (workflows/src/agent/spec.ts agentState).
 */
export const agentRuns = pgTable(
  'agent_runs',
  {
    id: uuid('id').primaryKey().references(() => jobs.id, { onDelete: 'cascade' }),
    rootId: uuid('root_id').notNull(),
    parentId: uuid('parent_id'),
    threadId: uuid('thread_id').notNull(),
    threadTurn: integer('thread_turn').notNull().default(1),
    /** The trace's agent name (`orchestrator`, `subagent-1`, …). */
    name: text('name').notNull().default('orchestrator'),
    data: jsonb('data'),
    /** Chat-mode answer, or the final message the model gave with its data. */
    message: text('message'),
    /** Model steps taken so far. */
    steps: integer('steps').notNull().default(0),
  },
  (t) => [index('agent_runs_root_idx').on(t.rootId), index('agent_runs_thread_idx').on(t.threadId, t.threadTurn)],
);

/**
 * The transcript the model reads, never carried by Temporal: system and user turns, each model
 * step's assistant message (with its tool calls), each tool's result. `key` makes every append
 * idempotent (`prompt`, `step:<n>`, `tool:<call id>`); `credits` is what the item cost, charged
 * only when the job succeeds (converting `reservation_key`), released otherwise.
 */
export const agentMessages = pgTable(
  'agent_messages',
  {
    runId: uuid('run_id').notNull().references(() => agentRuns.id, { onDelete: 'cascade' }),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    step: integer('step').notNull(),
    role: text('role').$type<'system' | 'user' | 'assistant' | 'tool'>().notNull(),
    content: text('content'),
    /** Assistant turns: [{id, name, arguments}]. */
    toolCalls: jsonb('tool_calls'),
    toolCallId: text('tool_call_id'),
    /** Tool turns: the small result the trace shows (and a retry re-emits), and the artifacts it made. */
    result: jsonb('result'),
    key: text('key').notNull(),
    credits: integer('credits').notNull().default(0),
    reservationKey: text('reservation_key'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.seq] }), uniqueIndex('agent_messages_run_key_idx').on(t.runId, t.key), index('agent_messages_run_step_idx').on(t.runId, t.step)],
);

/**
 * Artifact versions (`artifact.updated` trace events name them by id): the `result` JSON as it
 * takes shape, page markdown, extractions. Ids are derived from (run, key), so a retried
 * activity writes the same snapshot again instead of a twin.
 */
export const agentSnapshots = pgTable(
  'agent_snapshots',
  {
    id: uuid('id').primaryKey(),
    /** The agent job (root) the snapshot belongs to: GET /v2/agent/{jobId}/snapshots/{id} looks it up by both. */
    jobId: uuid('job_id').notNull(),
    runId: uuid('run_id').notNull().references(() => agentRuns.id, { onDelete: 'cascade' }),
    artifact: text('artifact').notNull(),
    kind: text('kind').$type<'json' | 'markdown' | 'html' | 'text' | 'screenshot'>().notNull(),
    content: text('content').notNull(),
    /** Source URL of a page artifact. */
    url: text('url'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('agent_snapshots_job_artifact_idx').on(t.jobId, t.artifact, t.createdAt)],
);
