/**
 * Which watch events of a package's objects may be drift, decided on the two copies alone: a change outside
 * status and the server's bookkeeping (resourceVersion, generation, managedFields). A Deployment's status moves
 * with every Pod; none of that is a reason to look at the package again.
 */
import type { KubeObject } from '../object.ts';
import { OwnerLabel } from './ownership.ts';

const BOOKKEEPING = ['resourceVersion', 'generation', 'managedFields'] as const;

export function changedOutsideStatus(old: KubeObject | undefined, obj: KubeObject): boolean {
  if (!old) return true;
  return JSON.stringify(comparable(old)) !== JSON.stringify(comparable(obj));
}

function comparable(obj: KubeObject): unknown {
  const { status: _status, metadata, ...rest } = obj;
  const meta: Record<string, unknown> = { ...metadata };
  for (const f of BOOKKEEPING) delete meta[f];
  return { ...rest, metadata: meta };
}

/** `namespace/name` of the PackageSync whose owner labels the object carries; undefined when it has none. */
export function ownerKeyOf(obj: KubeObject): string | undefined {
  const labels = obj.metadata.labels ?? {};
  const name = Object.hasOwn(labels, OwnerLabel.name) ? labels[OwnerLabel.name] : undefined;
  const namespace = Object.hasOwn(labels, OwnerLabel.namespace) ? labels[OwnerLabel.namespace] : undefined;
  return name && namespace ? `${namespace}/${name}` : undefined;
}
