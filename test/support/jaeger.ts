/**
 * A real Jaeger (v2, cmd/jaeger from its Go module, built by hack/build-cluster.sh jaeger on first use and cached
 * by version) on loopback for the tracing e2e: OTLP/HTTP in, memory storage, the query API out, every port chosen
 * free for this run (the all-in-one defaults would collide with anything else on the machine).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtTool, freePort } from './local-tools.ts';

export interface TestJaeger {
  /** Where to send spans: http://127.0.0.1:<port>/v1/traces */
  otlpTracesUrl: string;
  /** The query API's base: http://127.0.0.1:<port> */
  queryUrl: string;
  logs: string[];
  stop(): Promise<void>;
}

export function jaegerBinary(): string {
  return builtTool('jaeger', 'JAEGER_BIN');
}

export async function startJaeger(): Promise<TestJaeger> {
  const bin = jaegerBinary();
  const dir = await mkdtemp(join(tmpdir(), 'jaeger-'));
  const [otlp, http, grpc, health] = [await freePort(), await freePort(), await freePort(), await freePort()];
  await writeFile(
    join(dir, 'config.yaml'),
    `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${health}
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${http}
    grpc:
      endpoint: 127.0.0.1:${grpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlp}
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`,
  );
  const logs: string[] = [];
  const child: ChildProcess = spawn(bin, ['--config', join(dir, 'config.yaml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (b: Buffer) => logs.push(...b.toString('utf8').split('\n').filter(Boolean));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const queryUrl = `http://127.0.0.1:${http}`;
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
      throw new Error(`jaeger exited (${child.exitCode}): ${logs.slice(-10).join('\n')}`);
    }
    const up = await fetch(`${queryUrl}/api/services`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`jaeger did not answer within 60s: ${logs.slice(-10).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { otlpTracesUrl: `http://127.0.0.1:${otlp}/v1/traces`, queryUrl, logs, stop };
}
