import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { acceptTerms, allEntries, entriesOfFile, importEntries } from '@wds/catalog';
import { connectDb, migrateDb, removeCatalogEntries } from '@wds/db';
import { createLogger } from '@wds/log';
import { loadKeysEnv } from './env';

/**
 * The operator's catalog of provider capabilities (README: Catalog):
 * `npm run catalog -- import FILE` (the file becomes the whole operator catalog; checked first,
 * nothing changes when it has a problem), `npm run catalog -- list`, `npm run catalog -- remove
 * PROVIDER[/CAPABILITY]`, `npm run catalog -- accept-terms TEAM_ID PROVIDER` (records, for a team
 * whose people agreed elsewhere, the provider's current third-party data terms). Built-in
 * capabilities are always there. Teams use the catalog once
 * the operator enables it for them (`catalog` team flag). Talks to DATABASE_URL, or to the
 * embedded Postgres of a running `npm start`; imports apply to the next request.
 */
const { positionals } = parseArgs({ allowPositionals: true, options: {} });
const env = loadKeysEnv();
const log = createLogger({ name: 'catalog', level: env.LOG_LEVEL, to: 'stderr' });
const url = env.DATABASE_URL ?? `postgres://postgres:postgres@127.0.0.1:${env.WDS_EMBEDDED_PG_PORT}/wds`;
const fail = (m: string): never => {
  process.stderr.write(`${m}\n`);
  process.exit(2);
};

const [cmd, arg, arg2] = positionals;
// The file is checked before connecting: a bad file changes nothing.
let parsed: Awaited<ReturnType<typeof entriesOfFile>> | null = null;
if (cmd === 'import') {
  if (!arg) fail('usage: npm run catalog -- import FILE');
  try {
    parsed = await entriesOfFile(JSON.parse(readFileSync(arg!, 'utf8')));
  } catch (e) {
    fail((e as Error).message);
  }
}
const dbh = connectDb(url, { max: 1 });
try {
  await migrateDb(dbh);
  if (cmd === 'import' && parsed) {
    const r = await importEntries(dbh.db, parsed);
    log.info({ stored: r.stored, removed: r.removed }, 'catalog imported');
    process.stdout.write(`imported ${r.stored} capabilities (${r.removed} replaced)\n`);
  } else if (cmd === 'list') {
    for (const e of await allEntries(dbh.db)) {
      const target = e.target.kind === 'http' ? e.target.url : `built-in ${e.target.operation}`;
      process.stdout.write(`${e.provider}/${e.capability}  ${e.creditsCost} credits  ${target}${e.domains.length ? `  domains: ${e.domains.join(',')}` : ''}\n`);
    }
  } else if (cmd === 'remove' && arg) {
    const [provider, ...rest] = arg.split('/');
    const n = await removeCatalogEntries(dbh.db, provider!, rest.length ? rest.join('/') : undefined);
    if (!n) fail('no operator capability matches (built-ins cannot be removed)');
    log.info({ removed: n }, 'catalog entries removed');
    process.stdout.write(`removed ${n} capabilities\n`);
  } else if (cmd === 'accept-terms' && arg && arg2) {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(arg)) fail('TEAM_ID is the team\'s uuid (npm run keys -- list)');
    const entries = await allEntries(dbh.db);
    const version = entries.find((e) => e.provider === arg2 && e.terms)?.terms?.version ?? '';
    const r = await acceptTerms(dbh.db, arg, entries, { provider: arg2, version }).catch((e: Error) => fail(e.message));
    log.info({ teamId: arg, provider: r.provider, version: r.version }, 'terms accepted');
    process.stdout.write(`team ${arg} accepted ${r.provider}'s terms version ${r.version}\n`);
  } else {
    fail('usage: npm run catalog -- import FILE | list | remove PROVIDER[/CAPABILITY] | accept-terms TEAM_ID PROVIDER');
  }
} finally {
  await dbh.close();
}
