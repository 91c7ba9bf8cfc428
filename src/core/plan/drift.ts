import { Buffer } from 'node:buffer';
import type { KubeObject, ObjectMeta } from '../object.ts';
import { groupOf, isRecord, ownField } from '../object.ts';
import { objectDigest } from '../render/canonical.ts';
import { formatPointer } from './json-pointer.ts';
import { withoutIgnored } from './ignore.ts';
import { isSubset } from './subset.ts';

/** Stamped by the applier on every object: the digest of what was applied, minus this annotation. */
export const DigestAnnotation = 'packagesync.io/digest';

/** Written by the API server, never by the package: not part of what we compare. */
const serverOwnedMetadata = [
  'resourceVersion',
  'uid',
  'generation',
  'managedFields',
  'creationTimestamp',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
] as const;

export function desiredDigest(desired: KubeObject): string {
  return objectDigest(withoutDigest(desired));
}

/** The object the applier sends: desired plus its digest annotation. */
export function withDigest(desired: KubeObject): KubeObject {
  const annotations = { ...(desired.metadata.annotations ?? {}), [DigestAnnotation]: desiredDigest(desired) };
  return { ...desired, metadata: { ...desired.metadata, annotations } };
}

/**
 * Whether a server-side apply is needed, decided without a request. True when the object is missing,
 * when the package changed since the last apply (the digest differs: this also catches removed
 * fields, which the subset test cannot see), or when someone changed a field the package sets.
 */
export function needsApply(
  desired: KubeObject,
  live: KubeObject | undefined,
  ignored: readonly string[] = [],
): boolean {
  if (!live) return true;
  if (!appliedAsIs(desired, live)) return true;
  return !isSubset(withoutIgnored(comparable(desired), ignored), withoutIgnored(live, ignored));
}

/**
 * The live copy carries the digest of this very desired object: our last successful apply of it sent every
 * field the package sets now. A difference on such an object is drift (someone changed the cluster), not a
 * package change.
 */
export function appliedAsIs(desired: KubeObject, live: KubeObject): boolean {
  const annotations = live.metadata.annotations ?? {};
  const liveDigest = Object.hasOwn(annotations, DigestAnnotation) ? annotations[DigestAnnotation] : undefined;
  return liveDigest === desiredDigest(desired);
}

/**
 * The fields (JSON pointers) the package sets that the live copy has otherwise, in document order, at most
 * `limit`. Paths only, never values; a Secret's are folded to `/data` (its key names are its business).
 */
export function driftedPaths(
  desired: KubeObject,
  live: KubeObject,
  ignored: readonly string[] = [],
  limit = 10,
): string[] {
  const out: string[] = [];
  differences(withoutIgnored(comparable(desired), ignored), withoutIgnored(live, ignored), [], out, limit);
  if (desired.kind !== 'Secret' || groupOf(desired.apiVersion) !== '') return out;
  return [...new Set(out.map((p) => (p === '/data' || p.startsWith('/data/') ? '/data' : p)))];
}

function differences(desired: unknown, live: unknown, at: string[], out: string[], limit: number): void {
  if (out.length >= limit || isSubset(desired, live)) return;
  if (isRecord(desired) && isRecord(live)) {
    for (const key of Object.keys(desired)) differences(desired[key], ownField(live, key), [...at, key], out, limit);
    return;
  }
  if (Array.isArray(desired) && Array.isArray(live) && desired.length === live.length) {
    desired.forEach((item, i) => differences(item, live[i], [...at, String(i)], out, limit));
    return;
  }
  out.push(formatPointer(at));
}

function withoutDigest(obj: KubeObject): KubeObject {
  const annotations = obj.metadata.annotations;
  if (!annotations || !Object.hasOwn(annotations, DigestAnnotation)) return obj;
  const { [DigestAnnotation]: _digest, ...rest } = annotations;
  const metadata: ObjectMeta = { ...obj.metadata, annotations: rest };
  // Stamping then stripping must give back the same digest as never stamping.
  if (Object.keys(rest).length === 0) delete metadata.annotations;
  return { ...obj, metadata };
}

/** Desired as the server would show it: no server-owned metadata, no status, Secret stringData folded into data. */
function comparable(desired: KubeObject): KubeObject {
  const metadata: ObjectMeta = { ...desired.metadata };
  for (const field of serverOwnedMetadata) delete metadata[field];
  const { status: _status, ...rest } = desired;
  return foldStringData({ ...rest, metadata } as KubeObject);
}

/** The server stores a Secret's stringData base64-encoded in data and never returns stringData. */
function foldStringData(obj: KubeObject): KubeObject {
  const stringData = ownField(obj, 'stringData');
  if (obj.kind !== 'Secret' || groupOf(obj.apiVersion) !== '' || !isRecord(stringData)) return obj;
  const existing = ownField(obj, 'data');
  const data: Record<string, unknown> = isRecord(existing) ? { ...existing } : {};
  for (const [key, value] of Object.entries(stringData)) {
    if (typeof value === 'string') data[key] = Buffer.from(value, 'utf8').toString('base64');
  }
  const { stringData: _stringData, ...rest } = obj;
  return { ...rest, data } as KubeObject;
}
