/**
 * Gives the e2e suite a real control plane. With PACKAGESYNC_TEST_KUBECONFIG set, the tests use that
 * cluster (never a plain KUBECONFIG: tests create and delete things, and must not pick up a production
 * context by accident). Otherwise the local control plane is used when it is already up, or started
 * here and stopped after the run. A control plane that fails to start fails the whole run loudly.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';

const root = resolve(import.meta.dirname, '../..');
const clusterScript = resolve(root, 'hack/cluster.sh');

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    kubectl: string;
  }
}

function sh(args: string[], inherit = true): string {
  return execFileSync(clusterScript, args, { cwd: root, stdio: inherit ? 'inherit' : 'pipe', encoding: 'utf8' }) ?? '';
}

function clusterIsUp(): boolean {
  try {
    execFileSync(clusterScript, ['status'], { cwd: root, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export default function setup(project: TestProject): () => void {
  const kubectl = resolve(
    execFileSync(resolve(root, 'hack/build-cluster.sh'), ['paths'], { encoding: 'utf8' }).match(
      /KUBE_BIN_DIR=(.*)/,
    )![1]!,
    'kubectl',
  );
  const given = process.env.PACKAGESYNC_TEST_KUBECONFIG;
  let kubeconfig: string;
  let stopAfter = false;
  if (given) {
    if (!existsSync(given)) throw new Error(`PACKAGESYNC_TEST_KUBECONFIG=${given} does not exist`);
    kubeconfig = given;
  } else if (clusterIsUp()) {
    kubeconfig = sh(['kubeconfig'], false).trim();
  } else {
    // Throws (and so fails the run) with the failing process's log tail when the control plane won't start.
    sh(['up']);
    kubeconfig = sh(['kubeconfig'], false).trim();
    stopAfter = true;
  }
  execFileSync(kubectl, ['--kubeconfig', kubeconfig, 'get', '--raw', '/readyz'], { stdio: 'pipe' });
  project.provide('kubeconfig', kubeconfig);
  project.provide('kubectl', kubectl);
  return () => {
    if (stopAfter && !process.env.PACKAGESYNC_KEEP_CLUSTER) sh(['down']);
  };
}
