import { fileURLToPath } from 'node:url';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import * as schema from './schema/index';

export type Db = NodePgDatabase<typeof schema>;

/**
 * Runs `fn` in one transaction, handing it the transaction as a `Db`: this package's functions
 * take a `Db`, and drizzle's transaction has the same query surface under another type.
 */
export function inTransaction<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction((tx) => fn(tx as unknown as Db));
}

export interface DbHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

export function connectDb(url: string, opts: { max?: number } = {}): DbHandle {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10 });
  // An idle client erroring (e.g. Postgres restarting) must not crash the process.
  pool.on('error', () => {});
  const db = drizzle(pool, { schema });
  return { db, pool, close: () => pool.end() };
}

/**
 * The pg pool behind a Db (drizzle keeps it as `$client`): for statements drizzle cannot run as
 * named prepared statements (finishPages). Not for transactions' handles.
 */
export function poolOf(db: Db): pg.Pool {
  const pool = (db as { $client?: pg.Pool }).$client;
  if (!pool) throw new Error('poolOf: this Db handle has no pg pool (a transaction?)');
  return pool;
}

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));
/** Arbitrary constant: serialises migrations when several processes start at once. */
const MIGRATION_LOCK = 4_242_001;

export async function migrateDb(h: DbHandle): Promise<void> {
  const client = await h.pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migrate(drizzle(client, { schema }), { migrationsFolder: MIGRATIONS_DIR });
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
}
