import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { connectDb, migrateDb, storeCachedPage } from '@wds/db';
import { freePort, startEmbeddedPostgres } from '@wds/launch';
import { pgCpuMs } from './pg-cpu';
import { round, writeResult } from './stats';

/**
 * `npm run bench -- cache-body`: what writing a page's body into the page cache costs, on real
 * pages (../shared/bench/main-content, 85 article pages, 184 kB of HTML on average). Compared, in
 * interleaved rounds on one Postgres:
 * - `pglz`: the body as fetched into a column Postgres compresses (page_cache before migration 0028);
 * - `brotli`: storeCachedPage as it is (brotli quality 1 by the writer, the column stored as it comes).
 * Reported per row: Postgres CPU (all its processes), the writer's CPU (the whole process, libuv's
 * thread pool included), their sum, and the bytes stored (table with TOAST). The target is the
 * sum: `brotli` must cost less than `pglz`.
 */
const DIR = process.env.BENCH_CACHE_BODY_PAGES ?? '/work/shared/bench/main-content/html';
const ROUNDS = Number(process.env.BENCH_CACHE_BODY_ROUNDS ?? 3);
const REPEAT = Number(process.env.BENCH_CACHE_BODY_REPEAT ?? 4);

export async function runCacheBodyBench() {
  if (!existsSync(DIR)) throw new Error(`cache-body: no pages at ${DIR} (BENCH_CACHE_BODY_PAGES)`);
  const bodies = readdirSync(DIR).map((f) => gunzipSync(readFileSync(join(DIR, f))));
  const dataDir = mkdtempSync(join(tmpdir(), 'wds-bench-'));
  chmodSync(dataDir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir, port: await freePort() });
  const dbh = connectDb(pg.url, { max: 2 });
  try {
    await migrateDb(dbh);
    await dbh.pool.query(`ALTER SYSTEM SET synchronous_commit = off`);
    await dbh.pool.query(`SELECT pg_reload_conf()`);
    // page_cache as it was: the same columns, the body compressible by Postgres (bytea's default, EXTENDED).
    await dbh.pool.query(`CREATE TABLE v_pglz (LIKE page_cache INCLUDING DEFAULTS INCLUDING INDEXES); ALTER TABLE v_pglz ALTER COLUMN body SET STORAGE EXTENDED`);
    const page = (body: Buffer) => ({ url: 'https://cache.test/', finalUrl: 'https://cache.test/', statusCode: 200, contentType: 'text/html', charset: 'utf-8', body, engine: 'http' });
    const variants: Record<string, (key: string, body: Buffer) => Promise<unknown>> = {
      pglz: (key, body) =>
        dbh.pool.query(`INSERT INTO v_pglz (cache_key, url, final_url, status_code, content_type, charset, body, engine) VALUES ($1, 'https://cache.test/', 'https://cache.test/', 200, 'text/html', 'utf-8', $2, 'http')`, [key, body]),
      brotli: (key, body) => storeCachedPage(dbh.db, key, page(body)),
    };
    const best: Record<string, { pgMs: number; writerMs: number; totalMs: number }> = {};
    let seq = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, write] of Object.entries(variants)) {
        const pg0 = pgCpuMs(dataDir);
        const w0 = process.cpuUsage();
        for (let i = 0; i < REPEAT; i++) for (const b of bodies) await write(`k${++seq}`, b);
        const n = REPEAT * bodies.length;
        const w = process.cpuUsage(w0);
        const pgMs = (pgCpuMs(dataDir) - pg0) / n;
        const writerMs = (w.user + w.system) / 1000 / n;
        if (!best[name] || pgMs + writerMs < best[name].totalMs) best[name] = { pgMs: round(pgMs, 3), writerMs: round(writerMs, 3), totalMs: round(pgMs + writerMs, 3) };
      }
    }
    const sizes = (await dbh.pool.query(`SELECT pg_total_relation_size('v_pglz') AS pglz, pg_total_relation_size('page_cache') AS brotli`)).rows[0];
    const rows = ROUNDS * REPEAT * bodies.length;
    const result = {
      bench: 'cache-body',
      pages: bodies.length,
      avgBodyKb: round(bodies.reduce((s, b) => s + b.length, 0) / bodies.length / 1024, 1),
      cpuMsPerRow: best,
      bytesPerRow: { pglz: Math.round(Number(sizes.pglz) / rows), brotli: Math.round(Number(sizes.brotli) / rows) },
      ratioTotalCpuBrotliToPglz: round(best.brotli!.totalMs / best.pglz!.totalMs),
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(`written to ${writeResult('cache-body', result)}`);
    return result;
  } finally {
    await dbh.close();
    await pg.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
