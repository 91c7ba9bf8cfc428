/**
 * Drift as data: which objects of the package differ from it in the cluster, bounded for status (at most 20
 * objects, 10 fields each, field paths only, never values), the Drifted condition, and the messages of the
 * DriftDetected / DriftCorrected events.
 */
import type { Condition } from '../../api/packagesync.ts';
import type { DriftReport, DriftedObjectStatus } from '../../api/drift-schema.ts';
import { Reason } from '../../api/reasons.ts';
import { describeRef, type ObjectRef } from '../object.ts';

/** One object that differs from the package at a revision already applied: changed fields, or deleted. */
export interface Drift {
  ref: ObjectRef;
  /** Changed fields as JSON pointers (at most MAX_DRIFTED_PATHS). */
  paths: string[];
  missing: boolean;
  /** Correct mode: the field managers whose fields were taken back. */
  managers?: string[];
}

export const MAX_DRIFTED_OBJECTS = 20;
export const MAX_DRIFTED_PATHS = 10;
export const DriftedCondition = 'Drifted';

export function driftReport(drifts: readonly Drift[], now: string): DriftReport | undefined {
  if (drifts.length === 0) return undefined;
  const objects = drifts.slice(0, MAX_DRIFTED_OBJECTS).map((d): DriftedObjectStatus => {
    const o: DriftedObjectStatus = { object: describeRef(d.ref), paths: d.paths.slice(0, MAX_DRIFTED_PATHS) };
    if (d.missing) o.missing = true;
    if (d.managers && d.managers.length > 0) o.managers = [...d.managers].sort();
    return o;
  });
  return { time: now, total: drifts.length, objects };
}

/** Same objects and fields (the time aside): a status write or an event would say nothing new. */
export function sameDrift(a: DriftReport | undefined, b: DriftReport | undefined): boolean {
  const strip = (r: DriftReport | undefined) => JSON.stringify(r ? [r.total, r.objects] : null);
  return strip(a) === strip(b);
}

/** `Deployment/team-a/web (/spec/replicas, /spec/template/…)`-style list, at most `max` objects. */
export function describeDrift(report: DriftReport, max = 5): string {
  const named = report.objects.slice(0, max).map((o) => {
    const what = o.missing ? 'deleted' : o.paths.join(', ');
    const from = o.managers?.length ? `; from ${o.managers.map((m) => JSON.stringify(m)).join(', ')}` : '';
    return `${o.object} (${what}${from})`;
  });
  const more = report.total - named.length;
  return `${named.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

export function detectedMessage(report: DriftReport): string {
  const n = report.total;
  return (
    `${n} object${n === 1 ? '' : 's'} differ${n === 1 ? 's' : ''} from the package in the cluster: ` +
    `${describeDrift(report)}; spec.driftPolicy is Detect: nothing was changed`
  );
}

export function correctedMessage(report: DriftReport): string {
  return `Reverted changes made in the cluster: ${describeDrift(report)}`;
}

/**
 * Drifted=True while status.drift lists objects (Detect mode). kstatus readers ignore it: they read Ready,
 * Reconciling and Stalled, so a drifted PackageSync still reads Current (Argo CD's OutOfSync is likewise not a
 * health state).
 */
export function driftedCondition(
  report: DriftReport | undefined,
  generation: number,
): Omit<Condition, 'lastTransitionTime'> | undefined {
  if (!report || report.total === 0) return undefined;
  return {
    type: DriftedCondition,
    status: 'True',
    reason: Reason.DriftDetected,
    message: detectedMessage(report),
    observedGeneration: generation,
  };
}
