/**
 * Ignore rules: fields another owner keeps (an HPA's `spec.replicas`, a webhook's injected sidecar) are neither
 * reported as drift nor reverted, and once the object exists the package's value is not applied over them.
 *
 * - `spec.ignore[]`: `{paths: [JSON pointers], target?: {group, version, kind, name, namespace, labelSelector}}`,
 *   the shape of Flux's `driftDetection.ignore` (HelmRelease) and Kustomization `spec.ignore`; Argo CD's
 *   `ignoreDifferences[].jsonPointers` with its group/kind/name/namespace match. No target = every object.
 * - the annotation `packagesync.io/ignore-fields: /spec/replicas,/metadata/annotations/x`, on the object in the
 *   package or on the live object (a person may mark a live object without a commit).
 *
 * What is sent for an ignored field (respectIgnored) follows Argo CD's RespectIgnoreDifferences: the live
 * value, so the apply neither changes it nor, by leaving it out, lets server-side apply remove a field the
 * package set before. An object that does not exist yet gets the package's value.
 */
import { groupOf, versionOf, type KubeObject } from '../object.ts';
import { parsePointer, valueAt, withoutAt, withValueAt } from './json-pointer.ts';
import { matchesLabelSelector } from './label-selector.ts';

export const IgnoreFieldsAnnotation = 'packagesync.io/ignore-fields';

export interface IgnoreTarget {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  labelSelector?: string;
}

export interface IgnoreRule {
  paths: readonly string[];
  target?: IgnoreTarget;
}

/** The pointers ignored for this object: the rules whose target matches it, and both copies' annotations. */
export function ignoredPointers(
  desired: KubeObject,
  live: KubeObject | undefined,
  rules: readonly IgnoreRule[] = [],
): string[] {
  const out = new Set<string>();
  for (const rule of rules) {
    if (rule.target && !targets(rule.target, desired)) continue;
    for (const p of rule.paths) if (parsePointer(p)) out.add(p);
  }
  for (const obj of [desired, live]) {
    const value = obj?.metadata.annotations?.[IgnoreFieldsAnnotation];
    if (typeof value !== 'string') continue;
    for (const p of value.split(',').map((s) => s.trim())) if (p && parsePointer(p)) out.add(p);
  }
  // the identity of an object is never ignorable: it would make the rule apply to another object
  return [...out].filter((p) => !NEVER_IGNORED.some((n) => p === n || n.startsWith(`${p}/`) || p === ''));
}

const NEVER_IGNORED = ['/apiVersion', '/kind', '/metadata/name', '/metadata/namespace'];

/** Pointers that are not JSON pointers (for validation messages). */
export function invalidPointers(rules: readonly IgnoreRule[]): string[] {
  return rules.flatMap((r) => r.paths.filter((p) => !parsePointer(p) || p === ''));
}

function targets(t: IgnoreTarget, obj: KubeObject): boolean {
  if (t.group !== undefined && t.group !== groupOf(obj.apiVersion)) return false;
  if (t.version !== undefined && t.version !== versionOf(obj.apiVersion)) return false;
  if (t.kind !== undefined && t.kind !== obj.kind) return false;
  if (t.name !== undefined && t.name !== obj.metadata.name) return false;
  if (t.namespace !== undefined && t.namespace !== (obj.metadata.namespace ?? '')) return false;
  if (t.labelSelector !== undefined && !matchesLabelSelector(t.labelSelector, obj.metadata.labels ?? {})) return false;
  return true;
}

/** `obj` without the ignored fields: what drift is judged on. */
export function withoutIgnored<T>(obj: T, pointers: readonly string[]): T {
  let out = obj;
  for (const p of pointers) out = withoutAt(out, parsePointer(p)!);
  return out;
}

/**
 * What to apply: `desired` with each ignored field as `live` has it (dropped when live has none). Without a
 * live copy (a create), the package's values go as they are.
 */
export function respectIgnored(desired: KubeObject, live: KubeObject | undefined, pointers: readonly string[]) {
  if (!live || pointers.length === 0) return desired;
  let out = desired;
  for (const p of pointers) {
    const tokens = parsePointer(p)!;
    const value = valueAt(live, tokens);
    out = value === undefined ? withoutAt(out, tokens) : withValueAt(out, tokens, value);
  }
  return out;
}
