/**
 * Per-object policy, from the object's own annotations: how it is applied, whether an immutable-field
 * change may delete and re-create it, and whether prune or the PackageSync's deletion may delete it.
 * Flux's kustomize-controller annotations (and labels, which Flux reads too) and Argo CD's sync-options
 * mean the same here, so a package moved from either keeps its behaviour (docs/adr/0023).
 *
 *   packagesync.io/apply: Merge (default) | IfNotPresent | Ignore     Flux kustomize.toolkit.fluxcd.io/ssa
 *   packagesync.io/recreate: enabled                                  Flux …/force: enabled, Argo Force=true
 *   packagesync.io/prune: disabled                                    Flux …/prune: disabled, Argo Prune=false
 *                                                                     Argo Delete=false (teardown only)
 *
 * Which copy decides, as Flux's ssa manager does: Ignore on the package's copy or on the live object;
 * IfNotPresent on the package's copy; recreate on either; prune and delete on the live object (the one
 * that is there to delete; the package's annotations reach it with the apply).
 */
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../failure.ts';
import type { KubeObject } from '../object.ts';

export const ApplyAnnotation = 'packagesync.io/apply';
export const RecreateAnnotation = 'packagesync.io/recreate';
/** Also exported from ownership.ts, where it was first read. */
export const PruneAnnotation = 'packagesync.io/prune';

/** Flux's keys, read from annotations and labels as kustomize-controller does. */
export const FluxPolicy = {
  ssa: 'kustomize.toolkit.fluxcd.io/ssa',
  force: 'kustomize.toolkit.fluxcd.io/force',
  prune: 'kustomize.toolkit.fluxcd.io/prune',
  /** Flux's older spelling of ssa: Ignore. */
  reconcile: 'kustomize.toolkit.fluxcd.io/reconcile',
} as const;

export const ArgoSyncOptions = 'argocd.argoproj.io/sync-options';

/**
 * Merge: server-side apply of the fields the package sets, never removing fields other managers added
 * (our only mode: Flux's Override additionally strips kubectl's fields, which we never do, so it reads as Merge).
 * IfNotPresent: created when missing, never updated, pruned like any other object.
 * Ignore: never applied, pruned or deleted, not in health, not in the inventory.
 */
export type ApplyPolicy = 'Merge' | 'IfNotPresent' | 'Ignore';

export interface ObjectPolicy {
  apply: ApplyPolicy;
  /** Delete and re-create the object when the API server refuses a change as immutable. */
  recreate: boolean;
  /** Deleted by prune when it leaves the package. */
  prune: boolean;
  /** Deleted when its PackageSync is deleted (deletionPolicy Delete, WaitForTermination, MirrorPrune + prune). */
  deleteWithPackageSync: boolean;
}

const defaults: ObjectPolicy = { apply: 'Merge', recreate: false, prune: true, deleteWithPackageSync: true };

/**
 * The object's policy, or the first annotation whose value is not one we know (a typo must not silently
 * mean the default: `packagesync.io/apply: ignore-me` would otherwise be applied and pruned). Values are
 * matched without regard to case: Flux's v1beta2 wrote `merge`.
 */
export function readObjectPolicy(obj: KubeObject): Result<ObjectPolicy> {
  const annotations = obj.metadata.annotations ?? {};
  const labels = obj.metadata.labels ?? {};
  const own = (key: string) => (Object.hasOwn(annotations, key) ? annotations[key] : undefined);
  const flux = (key: string) => own(key) ?? (Object.hasOwn(labels, key) ? labels[key] : undefined);
  const invalid = <T>(key: string, value: string, allowed: string) =>
    fail<T>(
      Reason.InvalidManifest,
      `annotation ${key}: "${value.length > 40 ? `${value.slice(0, 40)}…` : value}" is not one of ${allowed}`,
    );

  const policy: ObjectPolicy = { ...defaults };
  const argo = new Map(
    (own(ArgoSyncOptions) ?? '')
      .split(',')
      .map((o) => o.trim().split('=') as [string, string?])
      .filter(([k]) => k !== '')
      .map(([k, v]) => [k, (v ?? '').toLowerCase()]),
  );

  const ours = own(ApplyAnnotation);
  const fluxSsa = flux(FluxPolicy.ssa);
  if (ours !== undefined) {
    const apply = match(ours, ['Merge', 'IfNotPresent', 'Ignore'] as const);
    if (!apply) return invalid(ApplyAnnotation, ours, 'Merge, IfNotPresent, Ignore');
    policy.apply = apply;
  } else if (fluxSsa !== undefined) {
    const apply = match(fluxSsa, ['Override', 'Merge', 'IfNotPresent', 'Ignore'] as const);
    if (!apply) return invalid(FluxPolicy.ssa, fluxSsa, 'Override, Merge, IfNotPresent, Ignore');
    policy.apply = apply === 'Override' ? 'Merge' : apply;
  }
  const reconcile = flux(FluxPolicy.reconcile);
  if (ours === undefined && reconcile !== undefined && reconcile.toLowerCase() === 'disabled') policy.apply = 'Ignore';

  /** enabled | disabled, ours first, else Flux's; undefined when neither is set. */
  const toggle = (ourKey: string, fluxKey: string): Result<boolean | undefined> => {
    const key = own(ourKey) !== undefined ? ourKey : fluxKey;
    const value = key === ourKey ? own(ourKey) : flux(fluxKey);
    if (value === undefined) return ok(undefined);
    const on = match(value, ['enabled', 'disabled'] as const);
    return on ? ok(on === 'enabled') : invalid(key, value, 'enabled, disabled');
  };
  const recreate = toggle(RecreateAnnotation, FluxPolicy.force);
  if (!recreate.ok) return recreate;
  policy.recreate = recreate.value ?? argo.get('Force') === 'true';
  const prune = toggle(PruneAnnotation, FluxPolicy.prune);
  if (!prune.ok) return prune;
  policy.prune = prune.value ?? true;
  // Argo CD's `confirm` waits for a person in its UI; with nothing here to confirm, it keeps the object.
  if (argo.has('Prune') && argo.get('Prune') !== 'true') policy.prune = false;
  policy.deleteWithPackageSync = policy.prune && !(argo.has('Delete') && argo.get('Delete') !== 'true');
  return ok(policy);
}

export interface ApplyDecision {
  /** Sent when it differs from the live copy (apply), created only when missing (create), or left alone. */
  action: 'apply' | 'create' | 'leave';
  /** Ignored: not applied, not in health, never deleted. */
  ignored: boolean;
  /** The package's copy says Ignore: the object is released from the inventory. */
  released: boolean;
  recreate: boolean;
}

/**
 * What the plan does with one object the package renders, given its live copy. Only the package's copy
 * can be invalid here (the caller names its file); a live copy's unknown value is read as the default.
 */
export function decideApply(desired: KubeObject, live: KubeObject | undefined): Result<ApplyDecision> {
  const wanted = readObjectPolicy(desired);
  if (!wanted.ok) return wanted;
  const there = live ? readObjectPolicy(live) : undefined;
  const livePolicy = there?.ok ? there.value : undefined;
  const released = wanted.value.apply === 'Ignore';
  const ignored = released || livePolicy?.apply === 'Ignore';
  const recreate = wanted.value.recreate || (livePolicy?.recreate ?? false);
  if (ignored) return ok({ action: 'leave', ignored, released, recreate: false });
  if (wanted.value.apply === 'IfNotPresent') {
    return ok({ action: live ? 'leave' : 'create', ignored, released, recreate: false });
  }
  return ok({ action: 'apply', ignored, released, recreate });
}

/**
 * Whether policy lets a live object be deleted: by prune when it left the package, or by the teardown of
 * its deleted PackageSync. An unreadable value keeps the object: someone meant to say something.
 */
export function deletableByPolicy(live: KubeObject, when: 'prune' | 'teardown'): boolean {
  const policy = readObjectPolicy(live);
  if (!policy.ok) return false;
  if (policy.value.apply === 'Ignore') return false;
  return when === 'prune' ? policy.value.prune : policy.value.deleteWithPackageSync;
}

function match<T extends string>(value: string, allowed: readonly T[]): T | undefined {
  return allowed.find((a) => a.toLowerCase() === value.trim().toLowerCase());
}
