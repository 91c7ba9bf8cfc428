import type { KubeObject } from '../object.ts';
import { deletableByPolicy, PruneAnnotation } from './object-policy.ts';

/** The PackageSync that renders, applies and may prune an object. */
export interface Owner {
  name: string;
  namespace: string;
}

/** Labels (not annotations) so that the applier and CLI can list an owner's objects with a selector. */
export const OwnerLabel = {
  name: 'packagesync.io/name',
  namespace: 'packagesync.io/namespace',
} as const;

/** `packagesync.io/prune: disabled` on the live object keeps it when it leaves the package (object-policy.ts). */
export { PruneAnnotation };
export const PruneDisabled = 'disabled';

export type Ownership = 'ours' | 'unowned' | { otherOwner: Owner };

export function ownerLabels(owner: Owner): Record<string, string> {
  return { [OwnerLabel.name]: owner.name, [OwnerLabel.namespace]: owner.namespace };
}

/**
 * Who owns a live object: this PackageSync, nobody (it may be adopted), or another PackageSync.
 * Half a mark (one label of the two) is treated as another owner: we cannot tell whose it is.
 */
/** The label selector that finds a PackageSync's objects. */
export function ownerSelector(owner: Owner): string {
  return `${OwnerLabel.name}=${owner.name},${OwnerLabel.namespace}=${owner.namespace}`;
}

export function ownershipOf(live: KubeObject, owner: Owner): Ownership {
  const labels = live.metadata.labels ?? {};
  const name = ownLabel(labels, OwnerLabel.name);
  const namespace = ownLabel(labels, OwnerLabel.namespace);
  if (name === undefined && namespace === undefined) return 'unowned';
  if (name === owner.name && namespace === owner.namespace) return 'ours';
  return { otherOwner: { name: name ?? '', namespace: namespace ?? '' } };
}

/**
 * Prune deletes only what still carries exactly this owner's mark and has not opted out (object-policy.ts:
 * prune disabled, apply Ignore, and for the teardown of a deleted PackageSync also Argo CD's Delete=false).
 */
export function mayPrune(live: KubeObject, owner: Owner, when: 'prune' | 'teardown' = 'prune'): boolean {
  return ownershipOf(live, owner) === 'ours' && deletableByPolicy(live, when);
}

function ownLabel(labels: Record<string, string>, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}
