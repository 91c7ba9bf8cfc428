import type { KubeObject } from '../object.ts';

/**
 * True when `owner` is `child`'s controller: same namespace, a controller owner reference to its kind and
 * name, matched by uid when both sides have one, so a deleted and recreated owner does not adopt the pods
 * of the one before. The one owner check of the health package (the wait's explanation and `why`'s chain
 * must agree on which pods belong to a workload).
 */
export function isOwnedBy(child: KubeObject, owner: KubeObject): boolean {
  if ((child.metadata.namespace ?? '') !== (owner.metadata.namespace ?? '')) return false;
  return (child.metadata.ownerReferences ?? []).some(
    (ref) =>
      ref.kind === owner.kind &&
      ref.name === owner.metadata.name &&
      ref.controller !== false &&
      (!ref.uid || !owner.metadata.uid || ref.uid === owner.metadata.uid),
  );
}
