import type { KubeObject, ObjectMeta } from '../object.ts';
import type { Owner } from '../plan/ownership.ts';
import { ownerLabels } from '../plan/ownership.ts';

export interface NamespacePolicy {
  /** Set on every namespaced object (Flux's spec.targetNamespace semantics). */
  target?: string | undefined;
  /** Set on namespaced objects that name none. */
  fallback: string;
}

/**
 * The object as it will be applied: namespace decided, owner labels stamped. Returns a copy; the
 * parsed document is not changed. Copies use spread, which defines own properties, so a `__proto__`
 * key stays plain data.
 */
export function normalizeObject(
  obj: KubeObject,
  namespaced: boolean,
  policy: NamespacePolicy,
  owner: Owner,
): KubeObject {
  const { name, namespace, ...rest } = obj.metadata;
  const labels = { ...(obj.metadata.labels ?? {}), ...ownerLabels(owner) };
  // Copied manifests often carry a namespace on cluster-scoped objects; kept, it would give the object
  // a wrong identity (inventory, apply URL).
  const metadata: ObjectMeta = namespaced
    ? { name, namespace: policy.target || namespace || policy.fallback, ...rest, labels }
    : { name, ...rest, labels };
  if (metadata.annotations === null) delete metadata.annotations;
  return { ...obj, metadata };
}
