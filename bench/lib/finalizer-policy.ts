/**
 * The bench measures PackageSync as deploy/ installs it: with deploy/finalizer-policy.yaml, the API server gives
 * each new PackageSync its finalizer at creation and the first sync makes no write of its own to add it
 * (docs/adr/0051). `--finalizer-policy remove` measures the controller adding the finalizer itself; `leave` (the
 * default on a cluster given with --kubeconfig) changes nothing cluster-wide and says what the cluster does.
 */
import { resolve } from 'node:path';
import type { KubeClient } from '../../src/adapters/kube/client.ts';
import { FINALIZER } from '../../src/api/packagesync.ts';
import { kubectl, root } from './cluster.ts';
import { PS_PATH } from './units.ts';

const POLICY = resolve(root, 'deploy/finalizer-policy.yaml');

export type PolicyChoice = 'install' | 'remove' | 'leave';

/**
 * Installs, removes or leaves the policy; installed, waits until the API server acts on it (its informers lag a
 * moment). True when new PackageSyncs get their finalizer at creation.
 */
export async function useFinalizerPolicy(
  kubeconfig: string,
  client: KubeClient,
  choice: PolicyChoice,
  namespace: string,
): Promise<boolean> {
  if (!['install', 'remove', 'leave'].includes(choice)) throw new Error(`--finalizer-policy: ${choice}?`);
  if (choice === 'remove') kubectl(kubeconfig, 'delete', '--ignore-not-found', '-f', POLICY);
  if (choice !== 'install') return givenAtCreation(client, namespace);
  kubectl(kubeconfig, 'apply', '--server-side', '--force-conflicts', '-f', POLICY);
  const deadline = Date.now() + 60_000;
  while (!(await givenAtCreation(client, namespace))) {
    if (Date.now() > deadline) throw new Error(`${POLICY} installed, but the API server did not act on it in 60 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
  return true;
}

/** A dry-run create: nothing is stored, and the answer shows what admission did. */
async function givenAtCreation(client: KubeClient, namespace: string): Promise<boolean> {
  const dry = await client.request<{ metadata: { finalizers?: string[] } }>('POST', PS_PATH(namespace), {
    query: { dryRun: 'All' },
    body: {
      apiVersion: 'packagesync.io/v1alpha1',
      kind: 'PackageSync',
      metadata: { name: 'finalizer-policy-probe', namespace },
      spec: { source: { url: 'https://example.invalid/none.git' } },
    },
  });
  return dry.metadata.finalizers?.includes(FINALIZER) ?? false;
}
