/**
 * Which cluster a PackageSync acts in: the controller's own, or the one its spec.kubeConfig.secretRef names
 * (Flux's Kustomization semantics). Chosen once per reconcile; the Run binds it with the identity (`actAs`),
 * so no later step knows or chooses a cluster. Status, events and the finalizer stay in the controller's
 * cluster whatever this returns.
 */
import type { Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { fail, ok, type Result } from '../core/failure.ts';
import type { Objects, Ports } from './ports.ts';

export async function targetCluster(
  namespace: string,
  spec: Pick<Spec, 'kubeConfig'>,
  ports: Pick<Ports, 'objects' | 'clusters'>,
  signal?: AbortSignal,
): Promise<Result<Objects>> {
  const ref = spec.kubeConfig?.secretRef;
  if (!ref) return ok(ports.objects);
  if (!ports.clusters) {
    return fail(
      Reason.KubeConfigInvalid,
      'spec.kubeConfig is not supported here (remote clusters need the controller)',
      {
        terminal: true,
      },
    );
  }
  return ports.clusters.objectsFor(namespace, ref, signal);
}
