import { createHash } from 'node:crypto';
import { fillPlaceholders, sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { poolOf, type Db } from './client';

/**
 * Hot statements (run for every crawled page) as named prepared statements: the text is built
 * once with drizzle placeholders (`$`), so the worker never rebuilds it and each pooled
 * connection has Postgres parse it once (pg remembers which names a connection has prepared).
 * Rows come back through pg's own type parsers (timestamptz → Date, bytea → Buffer, json →
 * objects), not drizzle's column mappings: select plain columns and alias them. The Db must be the
 * pool's own (connectDb): a transaction's handle (inTransaction) has no pool, and poolOf says so.
 */
export function preparedStatement<R extends pg.QueryResultRow>(build: ($: (name: string) => SQL) => SQL) {
  let st: { name: string; text: string; params: unknown[] } | undefined;
  return (db: Db, values: Record<string, unknown>): Promise<pg.QueryResult<R>> => {
    if (!st) {
      const { sql: text, params } = new PgDialect().sqlToQuery(build((name) => sql`${sql.placeholder(name)}`));
      st = { name: `wds_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`, text, params };
    }
    return poolOf(db).query<R>({ name: st.name, text: st.text, values: fillPlaceholders(st.params, values) });
  };
}
