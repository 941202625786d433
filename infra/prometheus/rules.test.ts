// The alert rules and the Alertmanager example, checked by the tools that load them in production: promtool parses
// every rule file and runs the unit tests in rules/tests/, amtool parses the route. On top: every alert has a case
// that makes it fire and one that keeps it quiet, and every runbook link an alert carries has its section.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { isExecutable, onPath } from '@wds/config/executables';

const root = fileURLToPath(new URL('../..', import.meta.url));
const rulesDir = join(root, 'infra/prometheus/rules');
const testsDir = join(rulesDir, 'tests');
const ruleFiles = readdirSync(rulesDir).filter((f) => f.endsWith('.yml')).sort();
const testFiles = readdirSync(testsDir).filter((f) => f.endsWith('.test.yml')).sort();

/** Debian puts the tools on PATH; a fresh machine gets them from .ci/run (packages prometheus, prometheus-alertmanager). */
function tool(name: string): string {
  const found = onPath(name) ?? (isExecutable(`/usr/bin/${name}`) ? `/usr/bin/${name}` : undefined);
  assert.ok(found, `${name} is installed (.ci/run installs it)`);
  return found;
}
const run = (cmd: string, args: string[], cwd = root) => execFileSync(tool(cmd), args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

interface Rule { alert?: string; record?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
const alerts = ruleFiles.flatMap((f) =>
  (YAML.parse(readFileSync(join(rulesDir, f), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules.filter((r) => r.alert).map((r) => ({ file: f, ...r }))),
);

test('promtool loads every rule file', () => {
  assert.ok(alerts.length >= 18, `${alerts.length} alerts`);
  const out = run('promtool', ['check', 'rules', ...ruleFiles.map((f) => join(rulesDir, f))]);
  assert.equal((out.match(/SUCCESS/g) ?? []).length, ruleFiles.length, out);
});

test('promtool test rules: every case passes', () => {
  // promtool exits non-zero on any failed case; its output names the case, expected and got.
  try {
    run('promtool', ['test', 'rules', ...testFiles], testsDir);
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    assert.fail(`promtool test rules failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
});

test('every alert has a case that fires it and one that keeps it quiet', () => {
  const fires = new Set<string>();
  const quiet = new Set<string>();
  for (const f of testFiles) {
    const doc = YAML.parse(readFileSync(join(testsDir, f), 'utf8')) as { rule_files: string[]; tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[] };
    for (const rf of doc.rule_files) assert.ok(existsSync(join(testsDir, rf)), `${f}: ${rf} exists`);
    for (const t of doc.tests) for (const c of t.alert_rule_test ?? []) (c.exp_alerts?.length ? fires : quiet).add(c.alertname);
  }
  for (const a of alerts) {
    assert.ok(fires.has(a.alert!), `${a.file}: ${a.alert} has no case that makes it fire`);
    assert.ok(quiet.has(a.alert!), `${a.file}: ${a.alert} has no case that keeps it quiet`);
  }
  const unknown = [...fires, ...quiet].filter((n) => !alerts.some((a) => a.alert === n));
  assert.deepEqual(unknown, [], 'tests name only alerts that exist');
});

test('every alert links a runbook section of docs/operations.md that exists', () => {
  const doc = readFileSync(join(root, 'docs/operations.md'), 'utf8');
  const anchors = new Set([...doc.matchAll(/^#{2,4} (.+)$/gm)].map((m) => m[1]!.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
  for (const a of alerts) {
    const link = /docs\/operations\.md#([a-z0-9-]+)/.exec(a.annotations?.description ?? '');
    assert.ok(link, `${a.alert}: description links its runbook section`);
    assert.ok(anchors.has(link[1]!), `${a.alert}: docs/operations.md has no section #${link[1]}`);
    assert.match(a.annotations?.summary ?? '', /\S/, `${a.alert}: has a summary`);
  }
});

test('Alertmanager loads the example route; pages go to the pager, tickets to tickets, info nowhere', () => {
  const config = join(root, 'infra/alertmanager/alertmanager.yml');
  assert.match(run('amtool', ['check-config', config]), /SUCCESS/);
  const route = (labels: string[]) => run('amtool', ['config', 'routes', 'test', `--config.file=${config}`, ...labels]).trim();
  assert.equal(route(['severity=page', 'alertname=WdsTargetDown']), 'pager');
  assert.equal(route(['severity=ticket', 'alertname=WdsCrawlFailureRatioHigh']), 'tickets');
  assert.equal(route(['severity=info', 'alertname=TemporalPollSuccessRateLow']), 'null');
  // every severity a rule uses has a route
  for (const a of alerts) assert.ok(['page', 'ticket', 'info'].includes(a.labels?.severity ?? ''), `${a.alert}: severity`);
});
