/**
 * The bench measures PackageSync with the opt-in deploy/optional/finalizer-policy.yaml applied: the API server gives
 * each new PackageSync its finalizer at creation and the first sync makes no write of its own to add it
 * (docs/adr/0051). `--finalizer-policy remove` measures the controller adding the finalizer itself; `leave` (the
 * default on a cluster given with --kubeconfig) changes nothing cluster-wide and says what the cluster does.
 */
import { resolve } from 'node:path';
import { KubeApiError, type KubeClient } from '../../src/adapters/kube/client.ts';
import { FINALIZER } from '../../src/api/packagesync.ts';
import { kubectl, root } from './cluster.ts';
import { PS_PATH } from './units.ts';

const POLICY = resolve(root, 'deploy/optional/finalizer-policy.yaml');

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
  if (choice === 'install') kubectl(kubeconfig, 'apply', '--server-side', '--force-conflicts', '-f', POLICY);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const given = await givenAtCreation(client, namespace);
    if (given === true || (given === false && choice !== 'install')) return given;
    if (Date.now() > deadline)
      throw new Error(
        given === undefined
          ? 'the API server did not admit a PackageSync in 60 s (503: its admission policies do not know the kind yet)'
          : `${POLICY} installed, but the API server did not act on it in 60 s`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * A dry-run create: nothing is stored, and the answer shows what admission did. Undefined while the API server's
 * admission policies do not know the kind yet: on a plane started a moment ago they answer 503 "Resource kind …
 * not found. There can be a delay…" for a while after the CRD is Established and served.
 */
async function givenAtCreation(client: KubeClient, namespace: string): Promise<boolean | undefined> {
  try {
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
  } catch (e) {
    if (e instanceof KubeApiError && e.status === 503) return undefined;
    throw e;
  }
}
