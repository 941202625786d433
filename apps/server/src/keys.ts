import { connectDb, createKey, ensureTeam, listKeys, migrateDb, revokeKey, setTeamFlags, TEAM_FLAGS, type TeamFlag } from '@wds/db';
import { SCOPES } from '@wds/contracts';
import { createLogger } from '@wds/log';
import { parseArgs } from 'node:util';
import { loadKeysEnv } from './env';

/**
 * `npm run keys -- create --team NAME [--scopes scrape,crawl] [--name LABEL]`
 * `npm run keys -- revoke KEY_OR_ID` / `npm run keys -- list`
 * `npm run keys -- flags --team NAME [--enable zeroDataRetention,catalog] [--disable threatProtection]`
 * Talks to DATABASE_URL, or to the embedded Postgres of a running `npm start`.
 */
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    team: { type: 'string', default: 'default' },
    scopes: { type: 'string' },
    name: { type: 'string' },
    enable: { type: 'string' },
    disable: { type: 'string' },
  },
});
const env = loadKeysEnv();
// Stdout is the command's output (a new key, a listing); its events (who got a key) go to stderr as JSON lines.
const log = createLogger({ name: 'keys', level: env.LOG_LEVEL, to: 'stderr' });
const url = env.DATABASE_URL ?? `postgres://postgres:postgres@127.0.0.1:${env.WDS_EMBEDDED_PG_PORT}/wds`;
const dbh = connectDb(url, { max: 1 });
const fail = (m: string): never => {
  process.stderr.write(`${m}\n`);
  process.exit(2);
};
try {
  await migrateDb(dbh);
  const [cmd, arg] = positionals;
  if (cmd === 'create') {
    const scopes = values.scopes ? values.scopes.split(',').map((s) => s.trim()) : null;
    const bad = scopes?.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (bad?.length) fail(`unknown scope(s): ${bad.join(', ')}; known: ${SCOPES.join(', ')}`);
    const created = await createKey(dbh.db, await ensureTeam(dbh.db, values.team!), { scopes, name: values.name });
    log.info({ team: values.team, keyId: created.id, scopes }, 'key created');
    process.stdout.write(`${created.key}\n`);
  } else if (cmd === 'revoke' && arg) {
    const n = await revokeKey(dbh.db, arg);
    if (!n) fail('no active key matches');
    log.info({ revoked: n }, 'keys revoked');
    process.stdout.write(`revoked ${n} key(s)\n`);
  } else if (cmd === 'list') {
    for (const k of await listKeys(dbh.db)) {
      process.stdout.write(`${k.id}  ${k.team}  ${k.prefix}…  ${k.scopes?.join(',') ?? '*'}  ${k.revokedAt ? 'revoked' : 'active'}\n`);
    }
  } else if (cmd === 'flags') {
    // Team-level features the spec leaves to the operator: zero data retention, catalog, threat protection.
    const change: Partial<Record<TeamFlag, boolean>> = {};
    for (const [list, on] of [[values.enable, true], [values.disable, false]] as const) {
      for (const f of list?.split(',').map((s) => s.trim()).filter(Boolean) ?? []) {
        if (!(TEAM_FLAGS as readonly string[]).includes(f)) fail(`unknown flag: ${f}; known: ${TEAM_FLAGS.join(', ')}`);
        change[f as TeamFlag] = on;
      }
    }
    const flags = await setTeamFlags(dbh.db, values.team!, change);
    if (!flags) fail(`no team named ${values.team}`);
    if (Object.keys(change).length) log.info({ team: values.team, change }, 'team flags changed');
    process.stdout.write(`${JSON.stringify(flags)}\n`);
  } else {
    fail('usage: npm run keys -- create --team NAME [--scopes a,b] [--name LABEL] | revoke KEY_OR_ID | list | flags --team NAME [--enable a,b] [--disable c]');
  }
} finally {
  await dbh.close();
}
