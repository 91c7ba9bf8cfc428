/**
 * One object of a PackageSync as its page shows it, read as the viewer in the PackageSync's target cluster: the
 * live object as YAML (as kubectl get -o yaml writes it) without managedFields, which are summarised instead, and
 * with a Secret's values masked (data, stringData, and kubectl's last-applied annotation, which holds them too).
 * What differs from the package: the drift the PackageSync's status names for it (the fields, their live values
 * and who holds them now), and, asked for on the page, what the next apply would change: `packagesync plan`'s
 * answer (plan-runner.ts), which in driftPolicy Detect leaves drift alone, as the apply would.
 */
import type { PackageSync } from '../../api/packagesync.ts';
import { computeHealth } from '../../core/health/index.ts';
import { describeRef, groupOf, type KubeObject } from '../../core/object.ts';
import { parsePointer, valueAt } from '../../core/plan/json-pointer.ts';
import { emitGoYamlV2 } from '../../core/render/goyaml-emit.ts';
import type { Cluster } from '../cluster.ts';
import { maskSecrets } from '../object-diff.ts';
import { withTargetObjects } from '../target-objects.ts';
import type { ObjectDetail, ObjectQuery } from './api-types.ts';
import { managersOf } from './field-managers.ts';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

export async function objectDetail(cluster: Cluster, ps: PackageSync, ref: ObjectQuery): Promise<ObjectDetail> {
  const live = await withTargetObjects(cluster, ps, (objects) => objects.get(ref));
  if (!live) return { ref, found: false, managers: [] };
  const h = computeHealth(live);
  const drift = driftOf(ps, ref, live);
  return {
    ref,
    found: true,
    ...(drift ? { drift } : {}),
    health: h.status,
    message: h.reason ? `${h.reason}: ${h.message ?? ''}` : (h.message ?? ''),
    yaml: emitGoYamlV2(shown(live)),
    managers: ((live.metadata.managedFields ?? []) as Record<string, string | undefined>[]).map((m) => ({
      manager: m.manager ?? '(none)',
      operation: m.operation ?? '',
      ...(m.time ? { time: m.time } : {}),
      ...(m.subresource ? { subresource: m.subresource } : {}),
    })),
  };
}

/** What the PackageSync's status says drifted in this object, with the live values and who holds them now. */
function driftOf(ps: PackageSync, ref: ObjectQuery, live: KubeObject): ObjectDetail['drift'] {
  const name = describeRef(ref);
  for (const [now, report] of [
    [true, ps.status?.drift],
    [false, ps.status?.lastDriftCorrection],
  ] as const) {
    const entry = report?.objects.find((o) => o.object === name);
    if (!report || !entry) continue;
    const masked = shown(live);
    return {
      now,
      time: report.time,
      missing: entry.missing === true,
      fields: entry.paths.map((path) => {
        const tokens = parsePointer(path);
        const value = tokens ? valueAt(masked, tokens) : undefined;
        return {
          path,
          ...(value === undefined ? {} : { live: JSON.stringify(value) }),
          changedBy: managersOf(live, path),
        };
      }),
    };
  }
  return undefined;
}

/** What the page shows of a live object: no managedFields; a Secret's values masked. */
export function shown(live: KubeObject): KubeObject {
  const { managedFields: _managed, ...metadata } = live.metadata;
  let obj: KubeObject = { ...live, metadata };
  if (live.kind === 'Secret' && groupOf(live.apiVersion) === '') {
    obj = maskSecrets(obj, undefined)[0]!;
    const annotations = obj.metadata.annotations;
    if (annotations && Object.hasOwn(annotations, LAST_APPLIED))
      obj = { ...obj, metadata: { ...obj.metadata, annotations: { ...annotations, [LAST_APPLIED]: '***' } } };
  }
  return obj;
}
