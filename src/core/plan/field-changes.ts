/**
 * Field-level changes between a live object and what the API server would store (the server-side dry
 * run's answer): the lines of `packagesync plan`. Pure. What only the server writes (managedFields,
 * resourceVersion, uid, generation, timestamps), status and our digest annotation are not changes a
 * person asked for and are left out, as `packagesync diff` leaves them out. Secret values never appear:
 * a Secret's data and stringData show `***`, and a changed value `*** (changed)`.
 */
import { groupOf, isRecord, type KubeObject } from '../object.ts';
import { DigestAnnotation } from './drift.ts';

export interface FieldChange {
  /** `.spec.template.spec.containers[0].image`; keys that are not identifiers are quoted: `.metadata.labels["app.kubernetes.io/name"]`. */
  path: string;
  /** JSON of the value before; undefined when the field is added. */
  old?: string;
  /** JSON of the value after; undefined when the field is removed. */
  new?: string;
}

const SERVER_METADATA = new Set([
  'managedFields',
  'resourceVersion',
  'generation',
  'uid',
  'creationTimestamp',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
]);

/** Values longer than this are cut: a plan is read by people, the digest covers the whole render. */
const MAX_VALUE = 200;

export const SECRET_MASK = '"***"';
export const SECRET_CHANGED = '"*** (changed)"';

export function fieldChanges(before: KubeObject, after: KubeObject): FieldChange[] {
  const out: FieldChange[] = [];
  const secret = before.kind === 'Secret' && groupOf(before.apiVersion) === '';
  walk(comparable(before), comparable(after), '', out);
  if (!secret) return out;
  return out.map((c) =>
    /^\.(data|stringData)\b/.test(c.path)
      ? {
          path: c.path,
          ...(c.old !== undefined ? { old: c.new !== undefined ? SECRET_CHANGED : SECRET_MASK } : {}),
          ...(c.new !== undefined ? { new: c.old !== undefined ? SECRET_CHANGED : SECRET_MASK } : {}),
        }
      : c,
  );
}

/** The object without server-written metadata, status and the digest annotation. */
function comparable(obj: KubeObject): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj.metadata)) if (!SERVER_METADATA.has(k)) metadata[k] = v;
  const annotations = obj.metadata.annotations;
  if (annotations && Object.hasOwn(annotations, DigestAnnotation)) {
    const { [DigestAnnotation]: _digest, ...rest } = annotations;
    if (Object.keys(rest).length > 0) metadata.annotations = rest;
    else delete metadata.annotations;
  }
  const { status: _status, metadata: _m, ...rest } = obj;
  return { ...rest, metadata };
}

function walk(a: unknown, b: unknown, path: string, out: FieldChange[]): void {
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) walk(a[k], b[k], `${path}${segment(k)}`, out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) walk(a[i], b[i], `${path}[${i}]`, out);
    return;
  }
  if (a === undefined && b === undefined) return;
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  out.push({
    path: path || '.',
    ...(a !== undefined ? { old: shown(a) } : {}),
    ...(b !== undefined ? { new: shown(b) } : {}),
  });
}

function segment(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function shown(v: unknown): string {
  const text = JSON.stringify(v);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE)}…` : text;
}

/** Kinds whose `spec.template` is a Pod template: a change under it rolls (or replaces) their Pods. */
const WORKLOADS = new Set(['apps/Deployment', 'apps/StatefulSet', 'apps/DaemonSet', 'apps/ReplicaSet', 'batch/Job']);

export function rollsPods(obj: Pick<KubeObject, 'apiVersion' | 'kind'>, changes: readonly FieldChange[]): boolean {
  if (!WORKLOADS.has(`${groupOf(obj.apiVersion)}/${obj.kind}`)) return false;
  return changes.some((c) => /^\.spec\.template($|\.|\[)/.test(c.path));
}
