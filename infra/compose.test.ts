import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

// `docker compose config` cannot run in CI: check docker-compose.yml against the repository instead.
const root = fileURLToPath(new URL('..', import.meta.url));
const read = (p: string) => readFileSync(join(root, p), 'utf8');
const compose = YAML.parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, { build?: { context: string; dockerfile?: string }; command?: string[]; environment?: Record<string, string>; volumes?: string[] }>;
};
const prom = YAML.parse(read('infra/prometheus/prometheus.yml')) as {
  scrape_configs: { job_name: string; static_configs?: { targets: string[] }[]; dns_sd_configs?: { names: string[]; port: number }[] }[];
};

/** Env var names a process reads: the keys of the zod shapes in its env.ts (and the common shape). */
function envKeys(...files: string[]): Set<string> {
  const keys = new Set<string>();
  for (const f of files) for (const m of read(f).matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)) keys.add(m[1]!);
  return keys;
}
const common = 'packages/config/src/common.ts';
const readBy = { api: envKeys(common, 'apps/api/src/env.ts'), worker: envKeys(common, 'apps/worker/src/env.ts') };
const ours = Object.entries(compose.services).filter(([, s]) => s.build);
const kindOf = (s: { command?: string[] }) => (s.command?.join(' ').includes('worker') ? 'worker' : 'api');

test('every build context, Dockerfile and mounted file exists', () => {
  assert.deepEqual(ours.map(([n]) => n).sort(), ['api', 'worker-browser', 'worker-fetch']);
  for (const [name, s] of Object.entries(compose.services)) {
    if (s.build) {
      assert.ok(existsSync(join(root, s.build.context)), `${name}: build context`);
      assert.ok(existsSync(join(root, s.build.context, s.build.dockerfile ?? 'Dockerfile')), `${name}: ${s.build.dockerfile}`);
    }
    for (const v of s.volumes ?? []) {
      const host = v.split(':')[0]!;
      if (host.startsWith('.')) assert.ok(existsSync(join(root, host)), `${name}: mounted ${host} exists`);
    }
  }
});

test('services set only env vars their app reads', () => {
  assert.ok(readBy.api.has('WDS_MAX_REQUEST_BYTES') && readBy.worker.has('WDS_METRICS_PORT'), 'env shapes parsed');
  for (const [name, s] of ours) {
    const known = readBy[kindOf(s)];
    for (const k of Object.keys(s.environment ?? {})) assert.ok(known.has(k), `${name} sets ${k}, which ${kindOf(s)} never reads`);
  }
  const browser = compose.services['worker-browser'];
  assert.match(browser?.environment?.WDS_WORKER_QUEUES ?? '', /wds-browser/);
  assert.match(read(browser!.build!.dockerfile!), /chromium/);
});

test('Prometheus scrapes the API port and both metrics ports of every worker service', () => {
  const job = (n: string) => prom.scrape_configs.find((c) => c.job_name === n);
  const api = compose.services.api!;
  assert.deepEqual(job('wds-api')?.static_configs?.[0]?.targets, [`api:${api.environment!.PORT}`]);
  assert.ok(api.volumes?.some((v) => v.startsWith('files:')), 'API serves the browser workers’ files volume');
  const workers = ours.filter(([, s]) => kindOf(s) === 'worker').map(([n]) => n).sort();
  for (const [jobName, varName] of [['wds-worker', 'WDS_METRICS_PORT'], ['wds-worker-temporal', 'WDS_TEMPORAL_METRICS_PORT']] as const) {
    const sd = job(jobName)?.dns_sd_configs?.[0];
    assert.ok(sd, jobName);
    assert.deepEqual([...sd.names].sort(), workers, `${jobName} covers every worker service`);
    for (const w of workers) assert.equal(compose.services[w]!.environment![varName], String(sd.port), `${w} ${varName}`);
  }
  const temporal = job('temporal')?.static_configs?.[0]?.targets[0];
  assert.equal(temporal?.split(':')[1], compose.services.temporal!.environment!.PROMETHEUS_ENDPOINT!.split(':')[1]);
});

test('Grafana: provisioning points at the mounted dashboards and the datasource uid they use', () => {
  const grafana = compose.services.grafana!;
  const mounted = Object.fromEntries((grafana.volumes ?? []).map((v) => v.split(':')).map(([h, c]) => [c!, h!.replace(/^\.\//, '')]));
  const provider = YAML.parse(read('infra/grafana/provisioning/dashboards/wds.yml')).providers[0];
  const dashDir = mounted[provider.options.path];
  assert.equal(dashDir, 'infra/grafana/dashboards');
  const ds = YAML.parse(read('infra/grafana/provisioning/datasources/prometheus.yml')).datasources[0];
  assert.equal(new URL(ds.url).hostname, 'prometheus');
  for (const f of readdirSync(join(root, dashDir!)).filter((x) => x.endsWith('.json'))) {
    const uids = new Set([...read(join(dashDir!, f)).matchAll(/"uid":\s*"([^"]+)"/g)].map((m) => m[1]));
    assert.ok(uids.has(ds.uid), `${f} uses datasource ${ds.uid}`);
  }
});
