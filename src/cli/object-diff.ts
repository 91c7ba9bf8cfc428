/**
 * One object's change as a unified diff, live → as the API server would store it. Pure: the dry-run
 * result and the live copy come in, text goes out. What only the server writes (managedFields,
 * resourceVersion, uid, generation, creationTimestamp, status) and our digest annotation are left out:
 * they change on every write and would bury the change a person is looking for. Secret values are
 * masked, as `kubectl diff` masks them: a diff is printed and pasted into tickets.
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';
import { DigestAnnotation } from '../core/plan/index.ts';
import { groupOf, isRecord, versionOf, type KubeObject } from '../core/object.ts';
import { emitGoYamlV2 } from '../core/render/goyaml-emit.ts';

const SERVER_METADATA = ['managedFields', 'resourceVersion', 'generation', 'uid', 'creationTimestamp', 'selfLink'];

/** A copy without server-written fields, status and the digest annotation. */
export function withoutNoise(obj: KubeObject): KubeObject {
  const metadata: Record<string, unknown> = { ...obj.metadata };
  for (const field of SERVER_METADATA) delete metadata[field];
  const annotations = obj.metadata.annotations;
  if (annotations && Object.hasOwn(annotations, DigestAnnotation)) {
    const { [DigestAnnotation]: _digest, ...rest } = annotations;
    if (Object.keys(rest).length > 0) metadata.annotations = rest;
    else delete metadata.annotations;
  }
  const { status: _status, ...rest } = obj;
  return { ...rest, metadata } as KubeObject;
}

const isSecret = (o: KubeObject | undefined) => o?.kind === 'Secret' && groupOf(o.apiVersion) === '';

/**
 * Secret values replaced by `***`; a value that changes shows as `*** (before)` / `*** (after)`, so the
 * diff still says which keys change without showing any value.
 */
export function maskSecrets(
  before: KubeObject | undefined,
  after: KubeObject | undefined,
): [KubeObject | undefined, KubeObject | undefined] {
  if (!isSecret(before) && !isSecret(after)) return [before, after];
  const masked: [KubeObject | undefined, KubeObject | undefined] = [before, after];
  for (const field of ['data', 'stringData']) {
    const a = isRecord(before?.[field]) ? (before[field] as Record<string, unknown>) : undefined;
    const b = isRecord(after?.[field]) ? (after[field] as Record<string, unknown>) : undefined;
    const mask = (own: Record<string, unknown>, other: Record<string, unknown> | undefined, side: string) =>
      Object.fromEntries(
        Object.keys(own).map((k) => [
          k,
          other && Object.hasOwn(other, k) && other[k] !== own[k] ? `*** (${side})` : '***',
        ]),
      );
    if (a) masked[0] = { ...masked[0]!, [field]: mask(a, b, 'before') };
    if (b) masked[1] = { ...masked[1]!, [field]: mask(b, a, 'after') };
  }
  return masked;
}

/** `apps/v1/Deployment/team-a/web`: a path-like name for diff headers. */
export function objectPath(obj: KubeObject): string {
  const group = groupOf(obj.apiVersion);
  const parts = [group, versionOf(obj.apiVersion), obj.kind, obj.metadata.namespace, obj.metadata.name];
  return parts.filter((p) => p !== undefined && p !== '').join('/');
}

/**
 * Sorted keys, like `kubectl diff`: the server's field order must not show up as a change. Written as go-yaml
 * writes it, so a string `"no"` shows quoted, as kubectl would need it.
 */
function toYaml(obj: KubeObject | undefined): string {
  return obj ? emitGoYamlV2(sortedKeys(obj)) : '';
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    Object.defineProperty(out, key, {
      value: sortedKeys(value[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * The unified diff from `live` (undefined: would be created) to `merged` (undefined: would be pruned),
 * or '' when the two are the same once the noise is gone.
 */
export function objectDiff(live: KubeObject | undefined, merged: KubeObject | undefined): string {
  const [before, after] = maskSecrets(live && withoutNoise(live), merged && withoutNoise(merged));
  const oldText = toYaml(before);
  const newText = toYaml(after);
  if (oldText === newText) return '';
  const path = objectPath((merged ?? live)!);
  const patch = structuredPatch(
    before ? `live/${path}` : '/dev/null',
    after ? `merged/${path}` : '/dev/null',
    oldText,
    newText,
    undefined,
    undefined,
    { context: 3 },
  );
  return formatPatch(patch, FILE_HEADERS_ONLY);
}
