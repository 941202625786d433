import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { bundleWorkflowCode, type WorkerOptions } from '@temporalio/worker';

const require = createRequire(import.meta.url);

/**
 * The workflow code a control worker runs, bundled once per state of the sources and reused.
 *
 * Bundling (webpack over `@wds/workflows`) costs several seconds of CPU at every worker start;
 * on a loaded 2-core machine it took over a minute, which made worker starts (tests, restarts
 * under a supervisor, rolling deploys) time out. The bundle depends only on the sources it is
 * built from and the Temporal SDK, so it is cached on disk under a key hashed from the contents of
 * every source file the bundle could include (workflows/ and every package's src/, whether or not
 * today's workflows import it, so a new import can never be served a stale bundle) and the SDK's
 * version. A cache that cannot be written (read-only install) only costs the bundling, as before.
 */
export async function workflowBundleOption(log: { info: (o: object, m: string) => void; warn: (o: object, m: string) => void }): Promise<Pick<WorkerOptions, 'workflowBundle'>> {
  const workflowsPath = require.resolve('@wds/workflows');
  const root = join(dirname(workflowsPath), '..', '..');
  const key = sourcesKey(root);
  const path = join(root, 'node_modules', '.cache', 'wds-workflow-bundle', `${key}.js`);
  try {
    statSync(path);
    return { workflowBundle: { codePath: path } };
  } catch {
    // not cached yet
  }
  const t0 = performance.now();
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger });
  log.info({ ms: Math.round(performance.now() - t0) }, 'workflow code bundled');
  try {
    mkdirSync(dirname(path), { recursive: true });
    // Written aside and renamed: a worker starting at the same moment reads a whole file or none.
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, path);
    pruneOldBundles(dirname(path), path);
  } catch (e) {
    log.warn({ err: e }, 'workflow bundle not cached (the next start bundles again)');
  }
  return { workflowBundle: { code } };
}

/** Every edit of the sources leaves a bundle behind (a few MB): keep the newest few. */
function pruneOldBundles(dir: string, keep: string, max = 8) {
  const old = readdirSync(dir)
    .filter((n) => n.endsWith('.js'))
    .map((n) => ({ p: join(dir, n), t: statSync(join(dir, n)).mtimeMs }))
    .sort((a, b) => b.t - a.t)
    .slice(max);
  for (const f of old) if (f.p !== keep) rmSync(f.p, { force: true });
}

/** A hash of the bundle's possible inputs: source files by path and content, and the SDK version. */
function sourcesKey(root: string): string {
  const h = createHash('sha256');
  h.update(`temporal-worker@${(JSON.parse(readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string }).version}\n`);
  const dirs = [join(root, 'workflows', 'src'), ...readdirSync(join(root, 'packages')).map((p) => join(root, 'packages', p, 'src'))];
  for (const file of dirs.flatMap((d) => sourceFiles(d)).sort()) {
    h.update(`${relative(root, file)}\n`);
    h.update(readFileSync(file));
  }
  return h.digest('hex').slice(0, 32);
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'node_modules') sourceFiles(p, out);
    } else if (/\.(ts|js|mjs|cjs|json)$/.test(name) && !name.endsWith('.test.ts')) {
      out.push(p);
    }
  }
  return out;
}

// webpack's progress lines would go to the worker's stdout as plain text; errors still throw.
const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};
