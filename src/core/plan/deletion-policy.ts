/**
 * spec.deletionPolicy: what the teardown of a deleted PackageSync does with its objects, with Flux's
 * kustomize-controller semantics (finalizerShouldDeleteResources). A suspended PackageSync deletes nothing
 * (suspend means hands off, also on the way out), as in Flux.
 *
 * Where we differ from Flux, both differences keep objects rather than lose them (docs/adr/0023): deletes go
 * in reverse dependency order (a CRD only once its custom resources are gone), and a delete the API server
 * refuses, or one that ordering still holds back when spec.timeout ends, keeps the finalizer and is retried.
 */
export type DeletionPolicy = 'MirrorPrune' | 'Delete' | 'WaitForTermination' | 'Orphan';

export interface Teardown {
  /** Delete the inventory's objects (those ours and not opted out; object-policy.ts). */
  delete: boolean;
  /**
   * Also wait, within spec.timeout, until objects held by finalizers are gone before the PackageSync goes.
   * Without it an object whose delete was accepted no longer holds the PackageSync (unless something in
   * the package must wait for it to be gone, such as its CRD or Namespace).
   */
  waitForTermination: boolean;
}

export function teardownFor(policy: DeletionPolicy, prune: boolean, suspend: boolean): Teardown {
  if (suspend) return { delete: false, waitForTermination: false };
  switch (policy) {
    case 'MirrorPrune':
      return { delete: prune, waitForTermination: false };
    case 'Delete':
      return { delete: true, waitForTermination: false };
    case 'WaitForTermination':
      return { delete: true, waitForTermination: true };
    case 'Orphan':
      return { delete: false, waitForTermination: false };
  }
}
