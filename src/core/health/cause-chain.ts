import type { KubeObject } from '../object.ts';
import { describeRef, refOf } from '../object.ts';
import { computeHealth } from './compute.ts';
import { notReadyCause, podCause } from './pod.ts';

/** A Ready condition as `why` shows it. */
export interface ReadyView {
  status: string;
  reason?: string;
  message?: string;
}

export interface ChainInput {
  /** `namespace/name` of the PackageSync and its Ready condition. */
  packageSync: { name: string; ready?: ReadyView };
  /** dependsOn targets, with their Ready condition (undefined = not found). */
  dependencies: readonly { name: string; ready?: ReadyView }[];
  /** Unhealthy workloads, each with the ReplicaSets and Pods listed in its namespace. */
  workloads: readonly { workload: KubeObject; children: readonly KubeObject[] }[];
}

/**
 * The chain from a PackageSync to the first real cause, one line a step (depth = indent):
 *   PackageSync team-a/web  Ready=False HealthCheckFailed
 *   └ Deployment/team-a/web  InProgress: 0 of 2 replicas available
 *     └ ReplicaSet/team-a/web-5d9f
 *       └ Pod/team-a/web-5d9f-abcde  ImagePullBackOff: Back-off pulling image "registry.local/web:2"
 * A blocking dependency comes first: while it is not Ready nothing below was even tried.
 */
export function causeChain(input: ChainInput): string[] {
  const lines = [`PackageSync ${input.packageSync.name}  ${readyText(input.packageSync.ready)}`];
  for (const dep of input.dependencies) {
    if (dep.ready?.status === 'True') continue;
    lines.push(`└ dependsOn ${dep.name}  ${dep.ready ? readyText(dep.ready) : 'not found'}`);
  }
  for (const { workload, children } of input.workloads) lines.push(...workloadChain(workload, children));
  return lines;
}

function readyText(ready: ReadyView | undefined): string {
  if (!ready) return 'Ready=Unknown';
  return [`Ready=${ready.status}`, ready.reason].filter(Boolean).join(' ');
}

function workloadChain(workload: KubeObject, children: readonly KubeObject[]): string[] {
  const health = computeHealth(workload);
  const lines = [`└ ${describeRef(refOf(workload))}  ${health.status}: ${health.message}`];
  // A Deployment's pods hang under its ReplicaSets; other workloads own their pods directly.
  const sets = children.filter((c) => c.kind === 'ReplicaSet' && ownedBy(c, workload));
  const owners = sets.length > 0 ? sets : [workload];
  for (const owner of owners) {
    const pods = children.filter((c) => c.kind === 'Pod' && ownedBy(c, owner) && !c.metadata.deletionTimestamp);
    const causes = pods.flatMap((pod) => {
      const cause = podCause(pod) ?? notReadyCause(pod);
      return cause ? [{ pod, cause }] : [];
    });
    if (causes.length === 0) continue;
    const indent = owner === workload ? '  ' : '    ';
    if (owner !== workload) lines.push(`  └ ${describeRef(refOf(owner))}`);
    const first = causes.find((c) => c.cause.fatal) ?? causes[0]!;
    lines.push(`${indent}└ ${describeRef(refOf(first.pod))}  ${first.cause.message}`);
  }
  return lines;
}

function ownedBy(child: KubeObject, owner: KubeObject): boolean {
  if ((child.metadata.namespace ?? '') !== (owner.metadata.namespace ?? '')) return false;
  return (child.metadata.ownerReferences ?? []).some(
    (ref) =>
      ref.kind === owner.kind &&
      ref.name === owner.metadata.name &&
      (!ref.uid || !owner.metadata.uid || ref.uid === owner.metadata.uid),
  );
}
