import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { decodeCachedBody, type DbHandle } from '@wds/db';

/**
 * Where a string survives a request: every column of every table in the stack's database,
 * every file under a directory, the Temporal histories of a namespace. Zero-data-retention
 * tests search for a marker their pages carry (in the URL path and the content) and expect no
 * hit; a control request without it proves the search finds what is there.
 */
export interface RetentionHit {
  where: string;
  sample: string;
}

/**
 * Every column of every table of the public schema (found through information_schema, so a
 * table added later is searched too), each compared as text: `jsonb`, `text`, arrays, and
 * `bytea` decoded as UTF-8 bytes (the page cache keeps bodies as bytes); a page cache body the
 * writer compressed (`body_encoding`) is searched once decoded (@wds/db decodeCachedBody).
 */
export async function scanTables(db: DbHandle, needle: string): Promise<RetentionHit[]> {
  const cols = await db.pool.query<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name, c.ordinal_position`,
  );
  const hits: RetentionHit[] = [];
  for (const c of cols.rows) {
    const col = `"${c.column_name}"`;
    const text = c.data_type === 'bytea' ? `position(convert_to($1, 'UTF8') in ${col}) > 0` : `position($1 in ${col}::text) > 0`;
    const shown = c.data_type === 'bytea' ? `encode(substring(${col} from 1 for 200), 'escape')` : `left(${col}::text, 200)`;
    const r = await db.pool.query<{ sample: string }>(`SELECT ${shown} AS sample FROM "${c.table_name}" WHERE ${text} LIMIT 1`, [needle]);
    if (r.rows[0]) hits.push({ where: `${c.table_name}.${c.column_name}`, sample: r.rows[0].sample });
  }
  if (!hits.some((x) => x.where === 'page_cache.body')) {
    const bodies = await db.pool.query<{ body: Buffer; encoding: string }>(`SELECT body, body_encoding AS encoding FROM page_cache WHERE body_encoding IS NOT NULL`);
    for (const { body, encoding } of bodies.rows) {
      const text = (await decodeCachedBody(body, encoding)).toString('utf8');
      const at = text.indexOf(needle);
      if (at < 0) continue;
      hits.push({ where: 'page_cache.body', sample: text.slice(Math.max(0, at - 100), at + 100) });
      break;
    }
  }
  return hits;
}

/** Tables of the public schema (so a test can say how many it searched). */
export async function tableNames(db: DbHandle): Promise<string[]> {
  const r = await db.pool.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`);
  return r.rows.map((x) => x.table_name);
}

/** Every file under `dir` (recursively), with whether its bytes or its path hold `needle`. */
export function scanFiles(dir: string, needle: string): { files: string[]; hits: RetentionHit[] } {
  const files: string[] = [];
  const hits: RetentionHit[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const rel = relative(dir, p);
        files.push(rel);
        if (rel.includes(needle) || readFileSync(p).includes(needle)) hits.push({ where: rel, sample: '' });
      }
    }
  };
  walk(dir);
  return { files, hits };
}

/**
 * Every workflow history of a namespace, searched as JSON (inputs, results, failures, heartbeat
 * details are base64 payloads: decoded first). Inputs should carry ids only.
 */
export async function scanTemporalHistories(address: string, namespace: string, needle: string): Promise<{ workflows: number; hits: RetentionHit[] }> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace });
    const hits: RetentionHit[] = [];
    let workflows = 0;
    for await (const wf of client.workflow.list()) {
      workflows++;
      const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      const text = JSON.stringify(history, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v));
      const at = text.indexOf(needle);
      if (at >= 0) hits.push({ where: `${wf.workflowId}/${wf.runId}`, sample: text.slice(Math.max(0, at - 150), at + 50) });
    }
    return { workflows, hits };
  } finally {
    await connection.close();
  }
}
