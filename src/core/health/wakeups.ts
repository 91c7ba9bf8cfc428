/**
 * Which watch events concern one health wait. A fleet's waits share one watch per kind (and per namespace
 * for children), so a wait woken by every event of its watches re-reads on every Deployment, ReplicaSet and
 * Pod change of thousands of neighbours: waits × events. A wait cares only about
 * - its own objects (same group, kind, namespace and name as one of its refs), and
 * - the children it reads to explain a workload that is not Current (engine/health-source.ts `children`):
 *   ReplicaSets whose ownerReferences name one of the workloads of their namespace (read only where a
 *   Deployment is), and Pods whose ownerReferences name one of those workloads or one of those ReplicaSets.
 * Owners are matched by name within the namespace, as the watches' owner index finds them. An event that
 * carries no object (a watch synced, refused or allowed again) is not judged here: it wakes every holder.
 */
import { groupOf, refKey, refOf, type KubeObject, type ObjectRef } from '../object.ts';

export class WakeInterest {
  private objects = new Set<string>();
  /** Namespace → names whose ReplicaSets the wait reads. */
  private replicaSetOwners = new Map<string, Set<string>>();
  /** Namespace → names whose Pods the wait reads (the workloads, and the ReplicaSets found for them). */
  private podOwners = new Map<string, Set<string>>();

  /** The wait's own objects, as of its latest read. */
  watch(refs: readonly ObjectRef[]): void {
    this.objects = new Set(refs.map(refKey));
  }

  /**
   * The workloads whose children the wait reads now ([] = none), and the children it found (the
   * ReplicaSets among them name more Pod owners).
   */
  explain(workloads: readonly KubeObject[], children: readonly KubeObject[]): void {
    const replicaSetOwners = new Map<string, Set<string>>();
    const podOwners = new Map<string, Set<string>>();
    const names = (m: Map<string, Set<string>>, ns: string) => m.get(ns) ?? m.set(ns, new Set()).get(ns)!;
    for (const w of workloads) names(podOwners, w.metadata.namespace ?? '').add(w.metadata.name);
    // the ReplicaSets of a namespace are read for every workload there as soon as one Deployment is
    for (const w of workloads) {
      const ns = w.metadata.namespace ?? '';
      if (isKind(w, 'apps', 'Deployment')) replicaSetOwners.set(ns, new Set(podOwners.get(ns)));
    }
    for (const c of children)
      if (isKind(c, 'apps', 'ReplicaSet')) names(podOwners, c.metadata.namespace ?? '').add(c.metadata.name);
    this.replicaSetOwners = replicaSetOwners;
    this.podOwners = podOwners;
  }

  /** Whether an add, update or delete of `obj` (`old`: the copy before an update) concerns the wait. */
  wants(obj: KubeObject, old?: KubeObject): boolean {
    return this.concerns(obj) || (old !== undefined && this.concerns(old));
  }

  private concerns(o: KubeObject): boolean {
    if (this.objects.has(refKey(refOf(o)))) return true;
    const owners = isKind(o, '', 'Pod')
      ? this.podOwners
      : isKind(o, 'apps', 'ReplicaSet')
        ? this.replicaSetOwners
        : undefined;
    const names = owners?.get(o.metadata.namespace ?? '');
    return names !== undefined && (o.metadata.ownerReferences ?? []).some((r) => names.has(r.name));
  }
}

function isKind(o: KubeObject, group: string, kind: string): boolean {
  return o.kind === kind && groupOf(o.apiVersion) === group;
}
