/**
 * The cluster a PackageSync's objects live in, for the commands that read them (`why`, `plan`): the CLI's own,
 * or the one its spec.kubeConfig.secretRef names, reached the way the controller reaches it (RemoteClusters:
 * the Secret read from the PackageSync's namespace in this cluster, a kubeconfig naming an exec plugin or a
 * file refused). Reading the Secret takes `get` on it, which is what the controller holds; what the commands
 * then read in the target cluster, they read as that kubeconfig's identity, as the controller would.
 * The PackageSync itself and its status stay in this cluster.
 */
import type { PackageSync } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import type { Objects } from '../engine/ports.ts';
import { RemoteClusters } from '../adapters/kube/remote-clusters.ts';
import { targetCluster } from '../engine/target-cluster.ts';
import type { Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';

export interface TargetObjects {
  objects: Objects;
  /** Closes the remote client, if one was opened. */
  close(): Promise<void>;
}

export async function targetObjects(cluster: Cluster, ps: PackageSync): Promise<TargetObjects> {
  if (!ps.spec.kubeConfig?.secretRef) return { objects: cluster.objects, close: () => Promise.resolve() };
  const clusters = new RemoteClusters(cluster.client);
  const got = await targetCluster(ps.metadata.namespace, ps.spec, { objects: cluster.objects, clusters });
  if (!got.ok) {
    await clusters.close();
    const { reason, message } = got.failure;
    // a Secret or kubeconfig to fix is bad input; a cluster that does not answer is the cluster's
    const code = reason === Reason.RemoteClusterUnreachable ? ExitCode.Cluster : ExitCode.Invalid;
    throw new CliError(code, `${reason}: ${message}`);
  }
  return { objects: got.value, close: () => clusters.close() };
}

/** Runs `body` with the objects of the PackageSync's cluster, closing a remote client afterwards. */
export async function withTargetObjects<T>(
  cluster: Cluster,
  ps: PackageSync,
  body: (objects: Objects) => Promise<T>,
): Promise<T> {
  const target = await targetObjects(cluster, ps);
  try {
    return await body(target.objects);
  } finally {
    await target.close();
  }
}
