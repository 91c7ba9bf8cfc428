/** What a bench run ran on and with: the machine and every tool's version, for the report's first table. */
import { execFileSync } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { kubectl, root } from './cluster.ts';
import { controllerRoot } from './procs.ts';

export function machine(): Record<string, string> {
  const model = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  return {
    CPU: `${model} × ${cpus().length}`,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    kernel: release(),
    'shared machine': 'yes: other engineers’ e2e tests may run on the shared control plane meanwhile',
  };
}

export function versions(kubeconfig: string, flux: boolean, fluxHelm: boolean): Record<string, string> {
  const env = readFileSync(resolve(root, 'hack/versions.env'), 'utf8');
  const v = (k: string) => new RegExp(`^${k}=(.*)$`, 'm').exec(env)?.[1] ?? '?';
  let commit = 'unknown';
  try {
    // the controller's checkout (BENCH_CONTROLLER_ROOT: another commit under this harness)
    const cwd = controllerRoot();
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd, encoding: 'utf8' }).trim();
    if (dirty) commit += ' + uncommitted changes';
  } catch {
    // not a git checkout
  }
  const server = JSON.parse(kubectl(kubeconfig, 'version', '-o', 'json')) as {
    serverVersion?: { gitVersion?: string };
  };
  return {
    PackageSync: `${(JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { version: string }).version} (${commit})`,
    Node: process.version,
    'kube-apiserver': server.serverVersion?.gitVersion ?? v('KUBERNETES_VERSION'),
    etcd: v('ETCD_VERSION'),
    kwok: v('KWOK_VERSION'),
    'Flux source-controller': flux || fluxHelm ? (process.env.SOURCE_CONTROLLER_VERSION ?? 'v1.9.1') : 'not run',
    'Flux kustomize-controller': flux ? (process.env.KUSTOMIZE_CONTROLLER_VERSION ?? 'v1.9.4') : 'not run',
    'Flux helm-controller': fluxHelm ? (process.env.HELM_CONTROLLER_VERSION ?? 'v1.4.3') : 'not run',
  };
}
