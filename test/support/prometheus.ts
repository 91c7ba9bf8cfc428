/**
 * A real Prometheus (cmd/prometheus from its Go module, built by hack/build-cluster.sh prometheus on first use and
 * cached by version) on loopback for the rollout metric gate's e2e: it scrapes the given targets every second and
 * answers PromQL on a free port. TSDB in a temporary directory, removed on stop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtTool, freePort } from './local-tools.ts';

export interface TestPrometheus {
  /** The API's base: http://127.0.0.1:<port> */
  url: string;
  logs: string[];
  stop(): Promise<void>;
}

export function prometheusBinary(): string {
  return builtTool('prometheus', 'PROMETHEUS_BIN');
}

/** `targets`: host:port pairs serving /metrics, scraped as job `packagesync`. */
export async function startPrometheus(targets: string[]): Promise<TestPrometheus> {
  const bin = prometheusBinary();
  const dir = await mkdtemp(join(tmpdir(), 'prometheus-'));
  const port = await freePort();
  await writeFile(
    join(dir, 'prometheus.yml'),
    `global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: packagesync
    static_configs:
      - targets: ${JSON.stringify(targets)}
`,
  );
  const logs: string[] = [];
  const child: ChildProcess = spawn(
    bin,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const keep = (b: Buffer) => logs.push(...b.toString('utf8').split('\n').filter(Boolean));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`prometheus exited (${child.exitCode}): ${logs.slice(-10).join('\n')}`);
    }
    const up = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus did not answer within 60s: ${logs.slice(-10).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, logs, stop };
}
