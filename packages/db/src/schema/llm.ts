import { bigint, pgTable, timestamp } from 'drizzle-orm/pg-core';

/**
 * Model tokens per one-minute window, for the whole deployment (WDS_LLM_TOKENS_PER_MINUTE): every
 * worker reserves a model step's tokens here before the step and corrects them by the real usage
 * after it, so the limit holds across workers. Old windows are deleted lazily.
 */
export const llmTokenWindows = pgTable('llm_token_windows', {
  windowStart: timestamp('window_start', { withTimezone: true }).primaryKey(),
  tokens: bigint('tokens', { mode: 'number' }).notNull().default(0),
});
