import type { KubeObject, ObjectMeta } from '../object.ts';
import type { Owner } from '../plan/ownership.ts';
import { ownerLabels } from '../plan/ownership.ts';

export interface NamespacePolicy {
  /**
   * spec.targetNamespace: for namespaced objects that name none (the engine issue's contract; Flux
   * would also override named namespaces, which would silently move objects a package put elsewhere).
   */
  target?: string | undefined;
  /** For namespaced objects that name none when there is no target: the PackageSync's namespace. */
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
    ? { name, namespace: namespace || policy.target || policy.fallback, ...rest, labels }
    : { name, ...rest, labels };
  if (metadata.annotations === null) delete metadata.annotations;
  return { ...obj, metadata };
}
