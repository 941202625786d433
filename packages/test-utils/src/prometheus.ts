import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isExecutable, onPath } from '@wds/config/executables';
import { freePort, stopChild } from '@wds/launch';

/** Debian's Prometheus server (package `prometheus`; .ci/run installs it). */
export function findPrometheus(): string | null {
  return onPath('prometheus') ?? (isExecutable('/usr/bin/prometheus') ? '/usr/bin/prometheus' : null);
}

export interface PromSeries {
  metric: Record<string, string>;
  value: [number, string];
}

export interface TestPrometheus {
  url: string;
  /** An instant query (`/api/v1/query`); throws with Prometheus's own message when the expression is refused. */
  query(expr: string): Promise<PromSeries[]>;
  /** Waits until every target is up and has been scraped `more` times since the call (counted by `up`'s samples). */
  waitForScrapes(more: number, timeoutMs?: number): Promise<void>;
  /** The loaded rules as Prometheus reports them (`/api/v1/rules`). */
  rules(): Promise<{ name: string; type: 'alerting' | 'recording'; health: string; lastError?: string }[]>;
  stop(): Promise<void>;
}

/**
 * A real Prometheus on 127.0.0.1 scraping the given targets every `scrapeIntervalMs` (and loading `ruleFiles`),
 * its data in a temp directory. A missing binary is an error, not a skip: CI installs it.
 */
export async function startPrometheus(o: { targets: Record<string, string[]>; ruleFiles?: string[]; scrapeIntervalMs?: number }): Promise<TestPrometheus> {
  const bin = findPrometheus();
  if (!bin) throw new Error('no prometheus binary (install Debian\'s package prometheus, or run .ci/run, which does)');
  const dir = mkdtempSync(join(tmpdir(), 'wds-prom-'));
  const interval = `${o.scrapeIntervalMs ?? 1000}ms`;
  const config = {
    global: { scrape_interval: interval, evaluation_interval: interval },
    rule_files: o.ruleFiles ?? [],
    scrape_configs: Object.entries(o.targets).map(([job, targets]) => ({ job_name: job, static_configs: [{ targets }] })),
  };
  // JSON is YAML: no YAML writer needed.
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(bin, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`prometheus did not start (exit ${child.exitCode}): ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error}`);
    return body.data;
  };
  return {
    url,
    query: async (expr) => (await api<{ result: PromSeries[] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
    async waitForScrapes(more, timeoutMs = 30_000) {
      const targets = Object.values(o.targets).flat().length;
      const counts = async () => {
        const r = await api<{ result: PromSeries[] }>(`/api/v1/query?query=${encodeURIComponent('count_over_time(up[1h]) and up == 1')}`);
        return new Map(r.result.map((s): [string, number] => [`${s.metric.job}/${s.metric.instance}`, Number(s.value[1])]));
      };
      const start = await counts();
      const until = Date.now() + timeoutMs;
      for (;;) {
        const now = await counts();
        if (now.size >= targets && [...now].every(([k, n]) => n - (start.get(k) ?? 0) >= more)) return;
        if (Date.now() > until) throw new Error(`prometheus: targets not up and scraped ${more} more times in ${timeoutMs} ms: ${JSON.stringify([...now])}`);
        await new Promise((res) => setTimeout(res, 250));
      }
    },
    rules: async () =>
      (await api<{ groups: { rules: { name: string; type: 'alerting' | 'recording'; health: string; lastError?: string }[] }[] }>('/api/v1/rules')).groups.flatMap((g) => g.rules),
    stop: async () => {
      await stopChild(child, 5_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
