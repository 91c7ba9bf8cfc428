import type { KubeObject } from '../object.ts';
import { condition, int, list, str, withReason } from './fields.ts';
import { awaitController, readyHealth } from './generic.ts';
import type { Health } from './health.ts';
import { current, failed, inProgress, plural } from './health.ts';

/** Rules for the remaining kinds whose health is not plain "conditions say so", and for PackageSync itself. */

export function persistentVolumeClaimHealth(pvc: KubeObject): Health {
  const phase = str(pvc, ['status', 'phase'], 'Pending');
  if (phase === 'Bound') return current(`bound to ${str(pvc, ['spec', 'volumeName']) || 'a volume'}`);
  // Lost: the bound volume is gone. The data is unreachable and nothing rebinds the claim by itself.
  if (phase === 'Lost') return failed('ClaimLost', 'ClaimLost: the bound PersistentVolume no longer exists');
  // Pending may also mean a WaitForFirstConsumer class waiting for a pod; the claim alone cannot tell.
  return inProgress('NotBound', `${phase.toLowerCase()}: not bound to a volume yet`);
}

export function serviceHealth(svc: KubeObject): Health {
  if (str(svc, ['spec', 'type']) !== 'LoadBalancer') return current('service is ready');
  // kstatus only checks spec.clusterIP, which is set at creation; what users wait for is the address.
  const ingress = list(svc, ['status', 'loadBalancer', 'ingress']);
  const address = ingress.map((i) => str(i, ['ip']) || str(i, ['hostname'])).find(Boolean);
  if (!address) return inProgress('NoLoadBalancerIngress', 'waiting for the load balancer to get an address');
  return current(`load balancer at ${address}`);
}

export function customResourceDefinitionHealth(crd: KubeObject): Health {
  const names = condition(crd, 'NamesAccepted');
  if (names?.status === 'False') {
    const reason = names.reason ?? 'NamesNotAccepted';
    return failed(reason, withReason(reason, names.message));
  }
  const established = condition(crd, 'Established');
  if (established?.status === 'True') return current('established');
  // Installing is the normal first state; any other False reason will not change without a new spec.
  if (established?.status === 'False' && established.reason && established.reason !== 'Installing') {
    return failed(established.reason, withReason(established.reason, established.message));
  }
  return inProgress('Installing', 'waiting for the API server to establish the CRD');
}

/**
 * A PDB is in effect once the disruption controller has observed it. Few allowed disruptions is the
 * budget working, not ill health, so the numbers go in the message only.
 */
export function podDisruptionBudgetHealth(pdb: KubeObject): Health {
  const pending = awaitController(pdb, 'disruption');
  if (pending) return pending;
  const allowed = int(pdb, ['status', 'disruptionsAllowed'], 0);
  const healthy = int(pdb, ['status', 'currentHealthy'], 0);
  const desired = int(pdb, ['status', 'desiredHealthy'], 0);
  return current(`${plural(allowed, 'disruption')} allowed (${healthy} pods healthy, ${desired} required)`);
}

/**
 * PackageSync follows the generic rules (Reconciling, Stalled, Ready), with one addition: a PackageSync
 * that the controller has not yet seen is InProgress, not Current, so a dependsOn gate or `kubectl wait`
 * done right after creating one does not pass before the first reconcile.
 */
export function packageSyncHealth(sync: KubeObject): Health {
  return awaitController(sync, 'packagesync') ?? readyHealth(sync) ?? current('reconciled');
}
