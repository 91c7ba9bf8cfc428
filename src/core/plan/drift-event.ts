/**
 * Which watch events of a package's objects may be drift, decided on the two copies alone: a change outside
 * status and the server's bookkeeping (resourceVersion, generation, managedFields). A Deployment's status moves
 * with every Pod; none of that is a reason to look at the package again. Nor is a label or annotation someone
 * added (kube-controller-manager's `deployment.kubernetes.io/revision` on every new Deployment): drift correction
 * takes back only what the package sets, which the object carried already — a key the package sets that someone
 * had removed came back with a removal event of its own, which is a reason to look.
 */
import type { KubeObject } from '../object.ts';
import { OwnerLabel } from './ownership.ts';

const BOOKKEEPING = ['resourceVersion', 'generation', 'managedFields'] as const;

export function changedOutsideStatus(old: KubeObject | undefined, obj: KubeObject): boolean {
  if (!old) return true;
  return JSON.stringify(comparable(old)) !== JSON.stringify(comparable(obj, old));
}

/** The object minus status and bookkeeping; with `before`, only the label and annotation keys `before` had. */
function comparable(obj: KubeObject, before?: KubeObject): unknown {
  const { status: _status, metadata, ...rest } = obj;
  const meta: Record<string, unknown> = { ...metadata };
  for (const f of BOOKKEEPING) delete meta[f];
  for (const f of ['labels', 'annotations'] as const) {
    const map = before ? keptKeys(metadata[f], before.metadata[f]) : metadata[f];
    if (map && Object.keys(map).length > 0) meta[f] = map;
    else delete meta[f];
  }
  return { ...rest, metadata: meta };
}

function keptKeys(
  now: Record<string, string> | undefined,
  before: Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (!now) return undefined;
  return Object.fromEntries(Object.entries(now).filter(([k]) => before !== undefined && Object.hasOwn(before, k)));
}

/** `namespace/name` of the PackageSync whose owner labels the object carries; undefined when it has none. */
export function ownerKeyOf(obj: KubeObject): string | undefined {
  const labels = obj.metadata.labels ?? {};
  const name = Object.hasOwn(labels, OwnerLabel.name) ? labels[OwnerLabel.name] : undefined;
  const namespace = Object.hasOwn(labels, OwnerLabel.namespace) ? labels[OwnerLabel.namespace] : undefined;
  return name && namespace ? `${namespace}/${name}` : undefined;
}
