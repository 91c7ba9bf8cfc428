/**
 * Which watch events of a package's objects may be drift, decided on the two copies alone: a change outside
 * status and the server's bookkeeping (resourceVersion, generation, managedFields). A Deployment's status moves
 * with every Pod; none of that is a reason to look at the package again. Nor is a label or annotation someone
 * added (kube-controller-manager's `deployment.kubernetes.io/revision` on every new Deployment): drift correction
 * takes back only what the package sets, which the object carried already — a key the package sets that someone
 * had removed came back with a removal event of its own, which is a reason to look.
 */
import { hash } from 'node:crypto';
import type { KubeObject } from '../object.ts';
import { OwnerLabel } from './ownership.ts';

const BOOKKEEPING = ['resourceVersion', 'generation', 'managedFields'] as const;

export function changedOutsideStatus(old: KubeObject | undefined, obj: KubeObject): boolean {
  if (!old) return true;
  return JSON.stringify(comparable(old)) !== JSON.stringify(comparable(obj, keysOf(old)));
}

/**
 * What a copy of an object we applied is judged against when no event carries the copy before: a watch's
 * first list delivers each object as an add, so an edit made between our apply and that list would otherwise
 * never be an update (drift-watch.ts). The digest of the applied copy outside status and bookkeeping, and the
 * label and annotation keys it had (someone else's keys are not drift, as in changedOutsideStatus).
 */
export interface AppliedShape {
  digest: string;
  labels: readonly string[];
  annotations: readonly string[];
}

export function appliedShape(applied: KubeObject): AppliedShape {
  const keys = keysOf(applied);
  return { digest: digestOf(comparable(applied)), ...keys };
}

/** Whether a copy differs from the one we applied outside status, bookkeeping and others' label/annotation keys. */
export function differsFromApplied(shape: AppliedShape, obj: KubeObject): boolean {
  return digestOf(comparable(obj, shape)) !== shape.digest;
}

interface MetadataKeys {
  labels: readonly string[];
  annotations: readonly string[];
}

const keysOf = (obj: KubeObject): MetadataKeys => ({
  labels: Object.keys(obj.metadata.labels ?? {}),
  annotations: Object.keys(obj.metadata.annotations ?? {}),
});

const digestOf = (value: unknown) => hash('sha256', JSON.stringify(value), 'base64');

/** The object minus status and bookkeeping; with `kept`, only those label and annotation keys. */
function comparable(obj: KubeObject, kept?: MetadataKeys): unknown {
  const { status: _status, metadata, ...rest } = obj;
  const meta: Record<string, unknown> = { ...metadata };
  for (const f of BOOKKEEPING) delete meta[f];
  for (const f of ['labels', 'annotations'] as const) {
    const map = kept ? keptKeys(metadata[f], kept[f]) : metadata[f];
    if (map && Object.keys(map).length > 0) meta[f] = map;
    else delete meta[f];
  }
  return { ...rest, metadata: meta };
}

function keptKeys(
  now: Record<string, string> | undefined,
  kept: readonly string[],
): Record<string, string> | undefined {
  if (!now) return undefined;
  return Object.fromEntries(kept.filter((k) => Object.hasOwn(now, k)).map((k) => [k, now[k]!]));
}

/** `namespace/name` of the PackageSync whose owner labels the object carries; undefined when it has none. */
export function ownerKeyOf(obj: KubeObject): string | undefined {
  const labels = obj.metadata.labels ?? {};
  const name = Object.hasOwn(labels, OwnerLabel.name) ? labels[OwnerLabel.name] : undefined;
  const namespace = Object.hasOwn(labels, OwnerLabel.namespace) ? labels[OwnerLabel.namespace] : undefined;
  return name && namespace ? `${namespace}/${name}` : undefined;
}
