import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { connectDb, ensureTeam, migrateDb, searchEntryOf } from '@wds/db';
import { freePort, startEmbeddedPostgres } from '@wds/launch';
import { transformHtml } from '@wds/transform';
import { sitePages } from './site-pages';
import { round } from './stats';
import { isChildOfPg, pgCpuMs } from './pg-cpu';

/**
 * Where indexing's cost per page goes, each part alone (development tool; bench/README "search"):
 * the worker's index text (searchEntryOf), to_tsvector's parts in Postgres (a server-side loop, no
 * round trips), and the whole upsert of a row. Page sets (BENCH_SEARCH_COST_SETS, default all):
 * `site`, the crawl bench's site page (one paragraph repeated, ~14,000 characters of text), `varied`,
 * the varied site's page (~16,000 characters of different words), and `real`, real article pages
 * (the main-content set, /work/shared/bench/main-content, when present). Upserts: see upsertVariants.
 */
const REPEAT = Number(process.env.BENCH_SEARCH_COST_REPEAT ?? 5);
const ROWS = Number(process.env.BENCH_SEARCH_COST_ROWS ?? 400);
const REAL_DIR = process.env.BENCH_SEARCH_COST_REAL ?? '/work/shared/bench/main-content';

const want = { markdown: true, html: false, links: false, images: false };

/** Pages of the crawl bench's site (bench/site-pages.ts), as its crawl stores them. */
function sitePageDocs(varied: boolean, n = 50, origin = 'http://127.0.0.1:40000'): unknown[] {
  const site = sitePages({ pages: 10_000, varied });
  return Array.from({ length: n }, (_, k) => toDoc(site.html(k + 5)!, `${origin}/p/${k + 5}`));
}

function toDoc(html: string, url: string): unknown {
  const r = transformHtml(html, url, { onlyMainContent: true, removeBase64Images: true, want });
  return { markdown: r.markdown, metadata: { ...r.metadata, url, sourceURL: url, statusCode: 200 } };
}

function realPages(): unknown[] {
  if (!existsSync(join(REAL_DIR, 'ground-truth.json'))) return [];
  const gt = JSON.parse(readFileSync(join(REAL_DIR, 'ground-truth.json'), 'utf8')) as Record<string, { url: string }>;
  return Object.entries(gt).map(([id, { url }]) => toDoc(gunzipSync(readFileSync(join(REAL_DIR, 'html', `${id}.html.gz`))).toString('utf8'), url));
}

type Pool = ReturnType<typeof connectDb>['pool'];
type Entry = NonNullable<ReturnType<typeof searchEntryOf>>;

let DATA_DIR = '';

const COLS = `team_id uuid, url_key text, url text, host text, title text, description text, headings text, body text, language text, config regconfig, content_type text, image_url text, published_at timestamptz, stored_at timestamptz, PRIMARY KEY (team_id, url_key)`;
const HEAD = `setweight(to_tsvector(config, title), 'A') || setweight(to_tsvector(config, headings), 'B') || setweight(to_tsvector(config, description), 'C')`;
const TSV = `${HEAD} || setweight(to_tsvector(config, body), 'D')`;
const TSV_RANK = `${HEAD} || setweight(to_tsvector(config, left(body, 1000)), 'D')`;

/** A copy of search_pages with other vectors, storage or index settings (`ddl` after the table is created as `t`). */
function variantTable(t: string, o: { tsv?: string | null; rank?: string | null; gin?: ('tsv' | 'tsv_rank')[]; ddl?: string } = {}): string {
  const tsv = o.tsv === undefined ? TSV : o.tsv;
  const rank = o.rank === undefined ? TSV_RANK : o.rank;
  const vectors = [tsv && `tsv tsvector GENERATED ALWAYS AS (${tsv}) STORED`, rank && `tsv_rank tsvector GENERATED ALWAYS AS (${rank}) STORED`].filter(Boolean);
  return [
    `CREATE TABLE ${t} (${[COLS, ...vectors].join(', ')})`,
    rank ? `ALTER TABLE ${t} ALTER COLUMN tsv_rank SET STORAGE MAIN` : '',
    tsv ? `ALTER TABLE ${t} ALTER COLUMN tsv SET STORAGE EXTERNAL` : '',
    `ALTER TABLE ${t} ALTER COLUMN body SET STORAGE EXTERNAL, SET (autovacuum_enabled = off)`,
    ...(o.gin ?? ['tsv', 'tsv_rank']).filter((c) => (c === 'tsv' ? tsv : rank)).map((c) => `CREATE INDEX ${t}_${c}_idx ON ${t} USING gin (${c})`),
    o.ddl ?? '',
  ].filter(Boolean).join('; ');
}

/**
 * Table variants, each written row by row (as pages are stored), interleaved over rounds; the
 * result is Postgres CPU ms per row of its live processes, the lowest round (others' load only
 * adds). Autovacuum is off for these tables: it would take over GIN pending-list cleanups and
 * exit, its CPU then missing from the sum (a variant looked as cheap as the floor that way). Each is
 * search_pages as migrated but for one thing (BENCH_SEARCH_COST_VARIANTS picks some):
 */
const VARIANTS: Record<string, string | null> = {
  /** search_pages itself: two vectors (computed by the insert), two GIN indexes (fastupdate on, 4 MB pending list). */
  current: null,
  /** No GIN index: what remains is computing and storing the vectors. */
  noGin: variantTable('v_nogin', { gin: [] }),
  /** Only tsv_rank's GIN index. */
  rankGinOnly: variantTable('v_rankgin', { gin: ['tsv_rank'] }),
  /** The body's vector without positions (strip): no phrase search beyond tsv_rank, smaller tsv. */
  bodyStripped: variantTable('v_strip', { tsv: `${HEAD} || strip(to_tsvector(config, body))` }),
  /** body and tsv offered to pglz first (their storage before migration 0023). */
  compressed: variantTable('v_compressed', { ddl: 'ALTER TABLE v_compressed ALTER COLUMN body SET STORAGE EXTENDED, ALTER COLUMN tsv SET STORAGE EXTENDED' }),
  /** GIN pending lists of 32 MB (merged into the tree 8× less often, in larger batches). */
  pending32mb: variantTable('v_pend32', { ddl: 'ALTER INDEX v_pend32_tsv_idx SET (gin_pending_list_limit = 32768); ALTER INDEX v_pend32_tsv_rank_idx SET (gin_pending_list_limit = 32768)' }),
  /** GIN pending lists of 256 kB. */
  pending256kb: variantTable('v_pend256', { ddl: 'ALTER INDEX v_pend256_tsv_idx SET (gin_pending_list_limit = 256); ALTER INDEX v_pend256_tsv_rank_idx SET (gin_pending_list_limit = 256)' }),
  /** GIN without a pending list (every key into the tree at insert). */
  noFastupdate: variantTable('v_nofu', { ddl: 'ALTER INDEX v_nofu_tsv_idx SET (fastupdate = off); ALTER INDEX v_nofu_tsv_rank_idx SET (fastupdate = off)' }),
  /** No vectors, no GIN: the row alone. */
  floor: variantTable('v_floor', { tsv: null, rank: null }),
};
const tableOf = (name: string) => (name === 'current' ? 'search_pages' : /CREATE TABLE (\w+)/.exec(VARIANTS[name]!)![1]!);

/**
 * BENCH_SEARCH_COST_PROFILE=<variant>: instead of the comparison, writes BENCH_SEARCH_COST_ROWS rows
 * of that variant under `perf record -g` of every Postgres process (report: perf report -i <file>).
 */
async function profileVariant(pool: Pool, entries: Entry[], teamId: string, name: string): Promise<string> {
  const { spawn } = await import('node:child_process');
  const pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d) && (isChildOfPg(d, DATA_DIR) || safeCmdline(d).includes(DATA_DIR)));
  const file = join(tmpdir(), `search-cost-${name}-${Date.now()}.perf`);
  const perf = spawn('perf', ['record', '-g', '-o', file, '-p', pids.join(',')], { stdio: 'inherit' });
  await new Promise((r) => setTimeout(r, 1000));
  const text = insertInto(tableOf(name));
  const t0 = pgCpuMs(DATA_DIR);
  for (let i = 0; i < ROWS; i++) await pool.query(text, rowParams(entries[i % entries.length]!, teamId, `p${i}`));
  const ms = (pgCpuMs(DATA_DIR) - t0) / ROWS;
  perf.kill('SIGINT');
  await new Promise((r) => perf.once('exit', r));
  return `${file} (${round(ms, 3)} ms per row)`;
}
const safeCmdline = (pid: string) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};
const ROW_COLS = 'team_id, url_key, url, host, title, description, headings, body, language, config, content_type, image_url, published_at, stored_at';
const ROW_VALUES = '$1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10::regconfig, $11, $12, $13::timestamptz, now()';
/** One row into the table; search_pages' vectors are plain columns (migration 0027) that its writer computes, as search-index.ts does. */
const insertInto = (table: string) =>
  table === 'search_pages'
    ? `INSERT INTO search_pages AS p (${ROW_COLS}, tsv, tsv_rank) SELECT v.*, ${TSV}, ${TSV_RANK} FROM (SELECT ${ROW_VALUES}) v(${ROW_COLS})
       ON CONFLICT (team_id, url_key) DO NOTHING`
    : `INSERT INTO ${table} AS p (${ROW_COLS}) SELECT ${ROW_VALUES} ON CONFLICT (team_id, url_key) DO NOTHING`;
const rowParams = (e: Entry, teamId: string, suffix: string) => [teamId, `${e.urlKey}#${suffix}`, e.url, e.host, e.title, e.description, e.headings, e.body, e.language, e.config, e.contentType, e.imageUrl, e.publishedAt];

async function upsertVariants(pool: Pool, entries: Entry[], teamId: string) {
  const pick = process.env.BENCH_SEARCH_COST_VARIANTS?.split(',');
  const names = Object.keys(VARIANTS).filter((n) => !pick || pick.includes(n));
  for (const n of names) if (VARIANTS[n]) await pool.query(VARIANTS[n]!);
  await pool.query('ALTER TABLE search_pages SET (autovacuum_enabled = off)');
  const best: Record<string, number> = {};
  const rounds = Number(process.env.BENCH_SEARCH_COST_ROUNDS ?? 3);
  let seq = 0;
  for (let round_ = 0; round_ < rounds; round_++) {
    for (const name of names) {
      const text = insertInto(tableOf(name));
      const t0 = pgCpuMs(DATA_DIR);
      for (let i = 0; i < ROWS; i++) await pool.query(text, rowParams(entries[i % entries.length]!, teamId, String(++seq)));
      const ms = (pgCpuMs(DATA_DIR) - t0) / ROWS;
      best[name] = Math.min(best[name] ?? Infinity, round(ms, 3));
    }
  }
  const sizes = await pool.query(
    `SELECT c.relname AS t, pg_total_relation_size(c.oid) AS bytes FROM pg_class c WHERE c.relname = ANY($1::text[])`,
    [names.map(tableOf)],
  );
  const bytesPerRow = Object.fromEntries(sizes.rows.map((r: { t: string; bytes: string }) => [names.find((n) => tableOf(n) === r.t), Math.round(Number(r.bytes) / (rounds * ROWS))]));
  await pool.query(`${names.filter((n) => VARIANTS[n]).map((n) => `DROP TABLE ${tableOf(n)};`).join(' ')} TRUNCATE search_pages; ALTER TABLE search_pages RESET (autovacuum_enabled)`);
  return { cpuMsPerRow: best, bytesPerRow };
}

export async function runSearchCostBench() {
  const dataDir = mkdtempSync(join(tmpdir(), 'wds-bench-'));
  chmodSync(dataDir, 0o755);
  DATA_DIR = dataDir;
  const pg = await startEmbeddedPostgres({ dataDir, port: await freePort() });
  const dbh = connectDb(pg.url, { max: 2 });
  const results: Record<string, unknown> = {};
  try {
    await migrateDb(dbh);
    // Commits as finishPage's (asynchronous): the upsert's time is CPU, not the WAL flush.
    await dbh.pool.query(`ALTER SYSTEM SET synchronous_commit = off`);
    await dbh.pool.query(`SELECT pg_reload_conf()`);
    results.postgres = (await dbh.pool.query(`SELECT version() v, (SELECT datctype FROM pg_database WHERE datname = current_database()) c`)).rows[0];
    const teamId = await ensureTeam(dbh.db, 'cost');
    const setNames = (process.env.BENCH_SEARCH_COST_SETS ?? 'site,varied,real').split(',');
    const sets: Record<string, () => unknown[]> = { site: () => sitePageDocs(false), varied: () => sitePageDocs(true), real: realPages };
    for (const name of setNames) {
      const docs = sets[name]?.() ?? [];
      if (!docs.length) continue;
      const out: Record<string, unknown> = { pages: docs.length };
      results[name] = out;
      const entries = docs.map((d) => searchEntryOf(d)!);
      const bodies = entries.map((e) => e.body);
      const configs = entries.map((e) => e.config);
      out.meanMarkdownChars = Math.round(docs.reduce((a: number, d) => a + ((d as { markdown: string }).markdown.length), 0) / docs.length);
      out.meanBodyChars = Math.round(bodies.reduce((a, b) => a + b.length, 0) / bodies.length);
      // Worker: the document → index text.
      let w = Infinity;
      for (let r = 0; r < REPEAT; r++) {
        const t = performance.now();
        for (const d of docs) searchEntryOf(d);
        w = Math.min(w, (performance.now() - t) / docs.length);
      }
      out.workerEntryMs = round(w, 3);
      const profile = process.env.BENCH_SEARCH_COST_PROFILE;
      if (profile) {
        await dbh.pool.query(VARIANTS[profile] ?? 'ALTER TABLE search_pages SET (autovacuum_enabled = off)');
        out.profile = await profileVariant(dbh.pool, docs.map((d) => searchEntryOf(d)!), teamId, profile);
        continue;
      }
      // Postgres, server-side: mean ms per page of an expression over every page's text (g varies the
      // input so nothing is folded to a constant).
      const expr = async (label: string, e: string) => {
        const text = `SELECT sum(length(${e})) FROM generate_series(1, ${REPEAT}) g, unnest($1::text[], $2::regconfig[], $3::text[], $4::text[], $5::text[]) AS x(body, cfg, title, headings, description)`;
        const params = [bodies.map((b) => b), configs, entries.map((x) => x.title), entries.map((x) => x.headings), entries.map((x) => x.description)];
        let best = Infinity;
        for (let k = 0; k < 3; k++) {
          const t0 = performance.now();
          await dbh.pool.query(text, params);
          best = Math.min(best, (performance.now() - t0) / REPEAT / docs.length);
        }
        out[label] = round(best, 3);
      };
      await expr('pgNothingMs', `(body || g::text)`);
      await expr('pgParseOnlyMs', `(SELECT count(*)::text FROM ts_parse('default', body || g::text))`);
      await expr('pgTsvSimpleMs', `to_tsvector('simple', body || g::text)::text`);
      await expr('pgTsvBodyMs', `to_tsvector(cfg, body || g::text)::text`);
      await expr('pgTsvBodyHead1000Ms', `to_tsvector(cfg, left(body, 1000) || g::text)::text`);
      await expr('pgTsvBody4000Ms', `to_tsvector(cfg, left(body, 4000) || g::text)::text`);
      const head = `setweight(to_tsvector(cfg, title || g::text), 'A') || setweight(to_tsvector(cfg, headings), 'B') || setweight(to_tsvector(cfg, description), 'C')`;
      await expr('pgBothColumnsMs', `(${head} || setweight(to_tsvector(cfg, body), 'D'))::text || (${head} || setweight(to_tsvector(cfg, left(body, 1000)), 'D'))::text`);
      out.distinctLexemesPerPage = round(
        Number((await dbh.pool.query(`SELECT avg(length(to_tsvector(cfg, body))) n FROM unnest($1::text[], $2::regconfig[]) AS x(body, cfg)`, [bodies, configs])).rows[0].n),
        0,
      );
      // Recall of a bounded body: distinct lexemes found only beyond the first N characters (not in title, headings, description).
      for (const n of [4000, 8000, 20000]) {
        const r = await dbh.pool.query(
          `SELECT sum(lost)::float / sum(total) AS lost_share, avg((lost > 0)::int) AS pages_losing FROM (
             SELECT length(to_tsvector(cfg, body)) AS total,
                    (SELECT count(*) FROM unnest(to_tsvector(cfg, body)) u WHERE NOT to_tsvector(cfg, left(body, ${n}) || ' ' || title || ' ' || headings || ' ' || description) @@ quote_literal(u.lexeme)::tsquery) AS lost
             FROM unnest($1::text[], $2::regconfig[], $3::text[], $4::text[], $5::text[]) AS x(body, cfg, title, headings, description)) s`,
          [bodies, configs, entries.map((x) => x.title), entries.map((x) => x.headings), entries.map((x) => x.description)],
        );
        out[`bound${n}_lexemesLost`] = round(Number(r.rows[0].lost_share), 4);
        out[`bound${n}_pagesLosing`] = round(Number(r.rows[0].pages_losing), 3);
      }
      out.upsert = await upsertVariants(dbh.pool, entries, teamId);
    }
    // Round trip of an upsert writing nothing (indexing off-path floor).
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) await dbh.pool.query('SELECT 1');
    results.roundTripMs = round((performance.now() - t0) / 200, 3);
    results.loadAverage = (await import('node:os')).loadavg().map((x) => round(x, 1));
    console.log(JSON.stringify(results, null, 2));
    return results;
  } finally {
    await dbh.close();
    await pg.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
