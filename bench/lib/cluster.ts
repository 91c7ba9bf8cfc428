/**
 * The bench's own control plane (hack/cluster.sh on other ports and another CLUSTER_DIR), so a benchmark
 * neither disturbs nor is disturbed by the e2e tests on the shared one; and the API server's request
 * counters (`apiserver_request_total`), read before and after each phase.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { KubeClient } from '../../src/adapters/kube/client.ts';

export const root = resolve(import.meta.dirname, '../..');
export const workDir = resolve(root, 'bench/.work');

/** Ports far from the shared cluster's defaults (2379, 6443, 10257, ...). */
export const benchClusterEnv = {
  CLUSTER_DIR: resolve(workDir, 'cluster'),
  ETCD_CLIENT_PORT: '12379',
  ETCD_PEER_PORT: '12380',
  APISERVER_PORT: '16443',
  KCM_PORT: '20257',
  SCHEDULER_PORT: '20259',
  KWOK_PORT: '20247',
};

function clusterSh(args: string[], inherit: boolean): string {
  return execFileSync(resolve(root, 'hack/cluster.sh'), args, {
    cwd: root,
    env: { ...process.env, ...benchClusterEnv },
    stdio: inherit ? ['ignore', 'inherit', 'inherit'] : 'pipe',
    encoding: 'utf8',
  });
}

/**
 * Starts the bench control plane when it is not up; returns its kubeconfig and a stop function that stops it
 * only when it was started here (a cluster someone left up for repeated runs stays up).
 */
export function ensureBenchCluster(): { kubeconfig: string; stop(): void } {
  let wasUp = true;
  try {
    clusterSh(['status'], false);
  } catch {
    wasUp = false;
  }
  clusterSh(['up'], true);
  return {
    kubeconfig: clusterSh(['kubeconfig'], false).trim(),
    stop: () => {
      if (!wasUp) clusterSh(['down'], true);
    },
  };
}

export function kubectlPath(): string {
  const out = execFileSync(resolve(root, 'hack/build-cluster.sh'), ['paths'], { encoding: 'utf8' });
  return resolve(/KUBE_BIN_DIR=(.*)/.exec(out)![1]!, 'kubectl');
}

export function kubectl(kubeconfig: string, ...args: string[]): string {
  return execFileSync(kubectlPath(), ['--kubeconfig', kubeconfig, ...args], {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
}

/** A client that counts its own requests by API-server verb, so the harness can subtract itself. */
/**
 * The project's CRDs applied, and waited for until the API server serves them (Established): on a control plane
 * started a moment ago the first request for a new kind can otherwise answer 503 "not found".
 */
export function applyCrds(kubeconfig: string): void {
  kubectl(kubeconfig, 'apply', '--server-side', '--force-conflicts', '-f', resolve(root, 'crds'));
  kubectl(kubeconfig, 'wait', '--for=condition=Established', '--timeout=120s', '-f', resolve(root, 'crds'));
  // Established can come before the API server's handler serves the kind ("Resource kind … not found. There can be
  // a delay…", 503): a list of every kind answering is the proof
  const kinds = kubectl(kubeconfig, 'get', '-f', resolve(root, 'crds'), '-o', 'name')
    .split('\n')
    .filter(Boolean)
    .map((n) => n.replace(/^customresourcedefinition\.apiextensions\.k8s\.io\//, ''))
    .join(',');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      kubectl(kubeconfig, 'get', kinds, '--all-namespaces', '--request-timeout=10s', '-o', 'name');
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      execFileSync('sleep', ['0.5']);
    }
  }
}

export interface CountingClient {
  client: KubeClient;
  own: Record<string, number>;
}

export async function countingClient(kubeconfig: string): Promise<CountingClient> {
  const own: Record<string, number> = {};
  const client = await KubeClient.create({
    kubeconfig,
    connections: 32,
    requestTimeoutMs: 120_000,
    onRequest: (verb, status) => {
      if (status === 0) return;
      // the client says GET for both; the harness never GETs a single object during a measured phase
      const v = verb === 'GET' ? 'LIST' : verb === 'POST' ? 'CREATE' : verb;
      own[v] = (own[v] ?? 0) + 1;
    },
  });
  return { client, own };
}

export type VerbCounts = Record<string, number>;

/** Sums `apiserver_request_total` by verb (APPLY = server-side apply PATCH). */
export async function apiserverRequests(client: KubeClient): Promise<VerbCounts> {
  const res = await client.stream('/metrics', { accept: 'text/plain', timeoutMs: 30_000 });
  const text = await res.body.text();
  return sumCounter(text, 'apiserver_request_total', 'verb');
}

/** The API server's write requests (`verb resource`) to the kinds a fleet unit is made of, and to its status and events. */
export async function apiserverFleetWrites(client: KubeClient): Promise<VerbCounts> {
  const res = await client.stream('/metrics', { accept: 'text/plain', timeoutMs: 30_000 });
  const text = await res.body.text();
  const out: VerbCounts = {};
  const resources = new Set([
    'packagesyncs',
    'configmaps',
    'services',
    'serviceaccounts',
    'deployments',
    'events',
    'notifiers',
  ]);
  for (const m of text.matchAll(/^apiserver_request_total\{([^}]*)\} ([0-9.e+]+)$/gm)) {
    const label = (k: string) => new RegExp(`(?:^|,)${k}="([^"]*)"`).exec(m[1]!)?.[1] ?? '';
    const verb = label('verb');
    if (!['APPLY', 'PATCH', 'POST', 'PUT', 'UPDATE', 'CREATE', 'DELETE'].includes(verb)) continue;
    if (!resources.has(label('resource'))) continue;
    const key = `${verb} ${label('resource')}${label('subresource') ? `/${label('subresource')}` : ''}`;
    out[key] = (out[key] ?? 0) + Number(m[2]);
  }
  return out;
}

/** Sums a Prometheus counter's samples by one label, e.g. controller-runtime's rest_client_requests_total by method. */
/** The sum of a metric's samples whose labels contain `labels` (all of them when empty). */
export function metricValue(metrics: string, name: string, labels = ''): number {
  let sum = 0;
  for (const m of metrics.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? ([0-9.e+-]+)$`, 'gm')))
    if (!labels || (m[1] ?? '').includes(labels)) sum += Number(m[2]);
  return sum;
}

export function sumCounter(text: string, metric: string, label: string): VerbCounts {
  const out: VerbCounts = {};
  const re = new RegExp(`^${metric}\\{([^}]*)\\} ([0-9.e+]+)$`, 'gm');
  const labelRe = new RegExp(`(?:^|,)${label}="([^"]*)"`);
  for (const m of text.matchAll(re)) {
    const key = labelRe.exec(m[1]!)?.[1] ?? '';
    out[key] = (out[key] ?? 0) + Number(m[2]);
  }
  return out;
}

export function diff(after: VerbCounts, before: VerbCounts, minus: VerbCounts = {}): VerbCounts {
  const out: VerbCounts = {};
  for (const k of new Set([...Object.keys(after), ...Object.keys(before)])) {
    const d = (after[k] ?? 0) - (before[k] ?? 0) - (minus[k] ?? 0);
    if (d !== 0) out[k] = Math.max(0, Math.round(d));
  }
  return out;
}

export const total = (c: VerbCounts): number => Object.values(c).reduce((a, b) => a + b, 0);
/** Counts as a report cell, sorted by key: "GET 3, PATCH 1"; with `per`, each divided by it (2 decimals). */
export const verbs = (c: VerbCounts, per?: number): string =>
  Object.entries(c)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${per === undefined ? v : (v / per).toFixed(2)}`)
    .join(', ') || '—';
export const writes = (c: VerbCounts): number =>
  ['CREATE', 'UPDATE', 'PATCH', 'APPLY', 'DELETE', 'DELETECOLLECTION', 'POST', 'PUT'].reduce(
    (a, v) => a + (c[v] ?? 0),
    0,
  );

export async function createNamespace(client: KubeClient, name: string): Promise<void> {
  await client.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
  });
}

/** false: delete namespaces without waiting for them to go (the smoke run on a shared, busy cluster). */
let waitForDeletion = true;
export function setWaitForDeletion(wait: boolean): void {
  waitForDeletion = wait;
}

/**
 * Deletes a namespace and waits until it is gone, so the next phase starts on a quiet cluster; `alwaysWait`
 * waits even under --no-wait-cleanup (the fleet floor: tens of thousands of objects going would load the next run).
 */
export async function deleteNamespace(
  client: KubeClient,
  name: string,
  timeoutMs = 900_000,
  alwaysWait = false,
): Promise<void> {
  try {
    await client.request('DELETE', `/api/v1/namespaces/${name}`);
  } catch {
    return;
  }
  if (!waitForDeletion && !alwaysWait) return;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await client.request('GET', `/api/v1/namespaces/${name}`);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`namespace ${name} still exists after ${timeoutMs / 1000}s`);
}
