import type { KubeObject } from '../object.ts';
import { groupOf } from '../object.ts';
import { genericHealth, readyHealth } from './generic.ts';
import type { Health } from './health.ts';
import { current } from './health.ts';
import { jobHealth } from './job.ts';
import {
  customResourceDefinitionHealth,
  persistentVolumeClaimHealth,
  packageSyncHealth,
  podDisruptionBudgetHealth,
  serviceHealth,
} from './misc.ts';
import { podHealth } from './pod.ts';
import { daemonSetHealth, deploymentHealth, replicaSetHealth, statefulSetHealth } from './workloads.ts';

type KindRule = (obj: KubeObject) => Health;

/** Keyed `group/Kind` ('' for core). `extensions` is the pre-1.16 home of the apps kinds. */
const KIND_RULES: ReadonlyMap<string, KindRule> = new Map([
  ['apps/Deployment', deploymentHealth],
  ['extensions/Deployment', deploymentHealth],
  ['apps/StatefulSet', statefulSetHealth],
  ['apps/DaemonSet', daemonSetHealth],
  ['extensions/DaemonSet', daemonSetHealth],
  ['apps/ReplicaSet', replicaSetHealth],
  ['extensions/ReplicaSet', replicaSetHealth],
  ['/Pod', podHealth],
  ['batch/Job', jobHealth],
  ['/PersistentVolumeClaim', persistentVolumeClaimHealth],
  ['/Service', serviceHealth],
  ['apiextensions.k8s.io/CustomResourceDefinition', customResourceDefinitionHealth],
  ['policy/PodDisruptionBudget', podDisruptionBudgetHealth],
  ['packagesync.io/PackageSync', packageSyncHealth],
]);

/**
 * The kstatus status of one object as read from the API server. Order, first match wins:
 * 1. generic: deletionTimestamp → Terminating; observedGeneration behind → InProgress;
 *    Stalled=True → Failed; Reconciling=True → InProgress;
 * 2. the kind's own rule, when it has one (a Pod's Ready condition is read there, with its context);
 * 3. the Ready condition: True → Current, False/Unknown → InProgress;
 * 4. otherwise Current: an object nobody reports on is as current as it will get.
 */
export function computeHealth(obj: KubeObject): Health {
  const generic = genericHealth(obj);
  if (generic) return generic;
  const rule = KIND_RULES.get(`${groupOf(obj.apiVersion)}/${obj.kind}`);
  if (rule) return rule(obj);
  return readyHealth(obj) ?? current('no status to wait for');
}
