/**
 * Runs the real controller as a child process (`node src/main.ts controller`) against the test
 * cluster. Each test file gets its own shard label, so controllers of files running in parallel never
 * reconcile each other's PackageSyncs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { API_VERSION, KIND, type PackageSync, type SpecInput } from '../../src/api/packagesync.ts';
import { packageSyncCollectionPath, PackageSyncs } from '../../src/adapters/kube/packagesyncs.ts';
import { conditionOf } from '../../src/core/status.ts';
import { expect } from 'vitest';
import { eventually, kube, kubeconfig, uniqueName } from './cluster.ts';

const root = resolve(import.meta.dirname, '../..');
export const SHARD_LABEL = 'e2e.packagesync.io/shard';

export interface ControllerHandle {
  shard: string;
  process: ChildProcess;
  logs: string[];
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  restart(): Promise<void>;
}

export interface ControllerOptions {
  /** Pass --allow-cross-namespace-objects (default true: most tests place objects in several namespaces). */
  allowCrossNamespace?: boolean;
  /** Pass --allow-insecure-http (default true: the test git servers speak plain http on loopback). */
  allowInsecureHttp?: boolean;
  args?: string[];
  /** Run with this kubeconfig instead of the suite's admin one (e.g. a ServiceAccount token's). */
  kubeconfig?: string;
  /** Join an existing shard (e.g. a second replica) instead of starting a new one. */
  shard?: string;
  /** Run this main.ts instead of the checkout's (e.g. one laid out as the image lays it out). */
  entry?: string;
  /** Run as this uid:gid, with this environment (as the image's USER and ENV do). */
  user?: { uid: number; gid: number };
  env?: NodeJS.ProcessEnv;
}

export async function startController(opts: ControllerOptions = {}): Promise<ControllerHandle> {
  const extraArgs = [
    ...(opts.allowCrossNamespace === false ? [] : ['--allow-cross-namespace-objects']),
    ...(opts.args ?? []),
  ];
  const shard = opts.shard ?? uniqueName('shard');
  const cache = mkdtempSync(join(tmpdir(), 'psync-e2e-cache-'));
  if (opts.user) chownSync(cache, opts.user.uid, opts.user.gid);
  const logs: string[] = [];
  // every line also goes to .e2e/logs/<shard>.log (ignored): what a failed run's controller said, to read after it
  mkdirSync(join(root, '.e2e/logs'), { recursive: true });
  const file = createWriteStream(join(root, '.e2e/logs', `${shard}.log`), { flags: 'a' });
  file.write(`# ${expect.getState().testPath ?? 'unknown test file'}\n`);
  const launch = () => {
    const child = spawn(
      process.execPath,
      [
        opts.entry ?? join(root, 'src/main.ts'),
        'controller',
        '--kubeconfig',
        opts.kubeconfig ?? kubeconfig(),
        '--watch-label-selector',
        `${SHARD_LABEL}=${shard}`,
        ...(opts.allowInsecureHttp === false ? [] : ['--allow-insecure-http']),
        '--git-cache-dir',
        cache,
        '--metrics-bind-address',
        '0',
        '--health-probe-bind-address',
        '0',
        '--log-level',
        'debug',
        ...extraArgs,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], ...(opts.user ?? {}), ...(opts.env ? { env: opts.env } : {}) },
    );
    const keep = (b: Buffer) => {
      file.write(b);
      logs.push(...b.toString('utf8').split('\n').filter(Boolean));
      if (logs.length > 5000) logs.splice(0, logs.length - 5000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    return child;
  };
  const kill = async (child: ChildProcess, signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill(signal);
    return exited;
  };
  const handle: ControllerHandle = {
    shard,
    process: launch(),
    logs,
    async stop(signal = 'SIGTERM') {
      const code = await kill(handle.process, signal);
      file.end();
      rmSync(cache, { recursive: true, force: true });
      return code;
    },
    async restart() {
      await kill(handle.process, 'SIGKILL');
      handle.process = launch();
    },
  };
  return handle;
}

export function packageSync(namespace: string, name: string, shard: string, spec: SpecInput): PackageSync {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace, labels: { [SHARD_LABEL]: shard } },
    spec: spec as PackageSync['spec'],
  };
}

export async function createPackageSync(ps: PackageSync): Promise<PackageSync> {
  const client = await kube();
  return client.request<PackageSync>('POST', packageSyncCollectionPath(ps.metadata.namespace), { body: ps });
}

export async function getPackageSync(namespace: string, name: string): Promise<PackageSync | undefined> {
  return new PackageSyncs(await kube()).get(namespace, name);
}

export async function patchPackageSync(namespace: string, name: string, patch: Record<string, unknown>): Promise<void> {
  const client = await kube();
  await client.request('PATCH', `${packageSyncCollectionPath(namespace)}/${name}`, {
    contentType: 'application/merge-patch+json',
    body: patch,
  });
}

/**
 * Waits until the PackageSync is Ready=True for its current generation and `check` (if given) holds.
 * On timeout the error shows the last conditions, which is what a failing test needs to say.
 */
export async function waitReady(
  namespace: string,
  name: string,
  check: (ps: PackageSync) => boolean = () => true,
  timeoutMs = 60_000,
): Promise<PackageSync> {
  let last: PackageSync | undefined;
  try {
    return await eventually(
      `PackageSync ${namespace}/${name} Ready`,
      async () => {
        last = await getPackageSync(namespace, name);
        if (!last) return false;
        const ready = conditionOf(last.status, 'Ready');
        return (
          ready?.status === 'True' &&
          last.status?.observedGeneration === last.metadata.generation &&
          check(last) &&
          last
        );
      },
      { timeoutMs },
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last status: ${JSON.stringify(last?.status?.conditions ?? null)}`, {
      cause: e,
    });
  }
}

/** Waits until Ready has `status` with `reason` (e.g. False / RenderFailed). */
export async function waitCondition(
  namespace: string,
  name: string,
  type: string,
  status: string,
  reason?: string,
  timeoutMs = 60_000,
): Promise<PackageSync> {
  let last: PackageSync | undefined;
  try {
    return await eventually(
      `PackageSync ${namespace}/${name} ${type}=${status}${reason ? ` (${reason})` : ''}`,
      async () => {
        last = await getPackageSync(namespace, name);
        const c = conditionOf(last?.status, type);
        return c?.status === status && (!reason || c.reason === reason) && last;
      },
      { timeoutMs },
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; last status: ${JSON.stringify(last?.status?.conditions ?? null)}`, {
      cause: e,
    });
  }
}

/** http://127.0.0.1:PORT of a controller's metrics/probe server, from the address it logs (port 0 = any). */
/** Controller args that serve metrics and probes on free loopback ports (httpBase finds them). */
export const SERVE_METRICS = ['--metrics-bind-address', '127.0.0.1:0', '--health-probe-bind-address', '127.0.0.1:0'];

/** The sum of every series of metric `name` (at `base`) whose labels include all of `labels`. */
export async function metricSum(base: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const has = new Map([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    if (Object.entries(labels).every(([k, v]) => has.get(k) === v)) sum += Number(line.split(' ').pop());
  }
  return sum;
}

export async function httpBase(c: ControllerHandle): Promise<string> {
  const line = await eventually('the controller serves metrics and probes', async () =>
    c.logs.find((l) => l.includes('serving metrics and probes')),
  );
  const { addresses } = JSON.parse(line) as { addresses: string[] };
  return `http://127.0.0.1:${addresses[0]!.split(':').pop()}`;
}
