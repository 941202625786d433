import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import type { DbHandle } from './client';

const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

/**
 * Applies the committed migrations before `tag` only (tests of a migration's data moves: rows of
 * the old shape are inserted, then `migrateDb` applies the rest). Reads a copy of the folder whose
 * journal stops before `tag`; drizzle records what it applied, so `migrateDb` goes on from there.
 */
export async function migrateDbBefore(h: DbHandle, tag: string): Promise<void> {
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] };
  const at = journal.entries.findIndex((e) => e.tag === tag);
  if (at < 0) throw new Error(`no migration ${tag}`);
  const dir = mkdtempSync(join(tmpdir(), 'wds-migrations-'));
  try {
    mkdirSync(join(dir, 'meta'));
    const entries = journal.entries.slice(0, at);
    writeFileSync(join(dir, 'meta/_journal.json'), JSON.stringify({ ...journal, entries }));
    for (const e of entries) copyFileSync(join(MIGRATIONS_DIR, `${e.tag}.sql`), join(dir, `${e.tag}.sql`));
    const client = await h.pool.connect();
    try {
      await migrate(drizzle(client), { migrationsFolder: dir });
    } finally {
      client.release();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
