/**
 * Steps 3 and 4, shared by the controller's reconcile and the CLI's `render`, `diff` and `apply`: the same
 * functions make the same decisions, so what `packagesync diff` shows is what the controller will do.
 *
 *   render   the package's files → objects, with the cluster's discovery deciding which kinds are namespaced
 *   plan     read the live copies (engine/live.ts), then core/plan decides what to apply, in which order
 *            (the dependency graph), and what to prune
 */
import { PRUNE_APPROVED, type PackageSync, type Spec } from '../api/packagesync.ts';
import type { Discovery } from '../adapters/kube/discovery.ts';
import type { PackageObjects } from './ports.ts';
import { ok, type Result } from '../core/failure.ts';
import type { InventoryEntry } from '../core/inventory.ts';
import { groupOf, type KubeObject } from '../core/object.ts';
import type { IgnoreRule } from '../core/plan/ignore.ts';
import { mayCreateUnread } from '../core/plan/create-only.ts';
import { checkPruneBudget } from '../core/plan/prune-budget.ts';
import { planChanges, type ChangePlan } from '../core/plan/plan-changes.ts';
import {
  plainPackage,
  readObjects,
  renderObjects,
  type LocatedObject,
  type RenderedPackage,
  type RenderOptions,
  type SourceFile,
} from '../core/render/index.ts';
import { readExternalDependencies } from './dependencies.ts';
import { readLiveState, type LiveState } from './live.ts';

export type PackageRenderOptions = Omit<RenderOptions, 'isNamespaced'>;

/**
 * Renders the package. Scope comes from discovery when there is a cluster (offline: built-in kinds and the
 * package's own CRDs decide): a kind discovery does not know (a CRD installed since it was loaded) gets one
 * refresh and a second render.
 */
export async function renderForCluster(
  files: readonly SourceFile[],
  options: PackageRenderOptions,
  discovery: Pick<Discovery, 'isNamespaced' | 'refresh'> | undefined,
): Promise<Result<RenderedPackage>> {
  const read = readObjects(files);
  if (!read.ok) return read;
  return renderBuiltForCluster({ objects: read.value, what: plainPackage(files.length) }, options, discovery);
}

/** The same, for objects a build produced (plain files read, kustomize, helm; engine/render-step.ts). */
export async function renderBuiltForCluster(
  built: { objects: readonly LocatedObject[]; what: string },
  options: PackageRenderOptions,
  discovery: Pick<Discovery, 'isNamespaced' | 'refresh'> | undefined,
): Promise<Result<RenderedPackage>> {
  const render = () =>
    renderObjects(
      built.objects,
      {
        ...options,
        ...(discovery ? { isNamespaced: (g, k) => discovery.isNamespaced(g, k) } : {}),
      },
      built.what,
    );
  const rendered = render();
  if (!discovery || !rendered.ok) return rendered;
  const unknownKind = (o: KubeObject) => discovery.isNamespaced(groupOf(o.apiVersion), o.kind) === undefined;
  if (!rendered.value.objects.some(unknownKind)) return rendered;
  await discovery.refresh();
  return render();
}

export interface PlannedPackage {
  live: LiveState;
  plan: ChangePlan;
}

/**
 * Reads what lives of the package, its inventory and what its depends-on annotations name outside it (as
 * the package's identity), then plans. `sources` (refKey → file) lets validation name files.
 */
export async function planAgainstLive(
  objects: PackageObjects,
  desired: readonly KubeObject[],
  inventory: readonly InventoryEntry[],
  opts: {
    signal?: AbortSignal;
    sources?: ReadonlyMap<string, string>;
    pruneProtectedKinds?: boolean;
    driftPolicy?: 'Correct' | 'Detect';
    ignore?: readonly IgnoreRule[];
  } = {},
): Promise<Result<PlannedPackage>> {
  const { signal, sources } = opts;
  const live = await readLiveState(objects, desired, inventory, {
    ...(signal ? { signal } : {}),
    mayCreateUnread: (o) => mayCreateUnread(o, opts.ignore),
  });
  if (!live.ok) return live;
  const external = await readExternalDependencies(objects, desired, { ...(signal ? { signal } : {}) });
  if (!external.ok) return external;
  const plan = planChanges(desired, inventory, live.value.byKey, objects.owner, {
    ...(sources ? { sources } : {}),
    external: external.value,
    pruneProtectedKinds: opts.pruneProtectedKinds ?? false,
    ...(opts.driftPolicy ? { driftPolicy: opts.driftPolicy } : {}),
    ...(opts.ignore ? { ignore: opts.ignore } : {}),
  });
  if (!plan.ok) return plan;
  // what was not read is sent create-only; one the plan leaves alone is not sent at all
  for (const key of live.value.unverified) if (plan.value.toApply.has(key)) plan.value.createOnly.add(key);
  return ok({ live: live.value, plan: plan.value });
}

/** The plan of a PackageSync's package and what its prune budget says of it. */
export interface PackagePlan extends PlannedPackage {
  /** spec.pruneBudget against this plan's deletions (core/plan/prune-budget.ts): the reconcile stops on it. */
  budget: Result<void>;
}

/**
 * The one way a PackageSync's rendered package is planned, by the reconcile and by `packagesync plan`: the spec's
 * plan options (prune of protected kinds, drift policy, ignore rules), then its prune budget against the revision
 * (approved by the prune-approved annotation).
 */
export async function planForPackage(
  objects: PackageObjects,
  ps: Readonly<PackageSync>,
  spec: Spec,
  rendered: { objects: readonly KubeObject[]; sources: ReadonlyMap<string, string> },
  revision: string,
  signal?: AbortSignal,
): Promise<Result<PackagePlan>> {
  const inventory = ps.status?.inventory?.entries ?? [];
  const planned = await planAgainstLive(objects, rendered.objects, inventory, {
    ...(signal ? { signal } : {}),
    sources: rendered.sources,
    pruneProtectedKinds: spec.pruneProtectedKinds,
    driftPolicy: spec.driftPolicy,
    ...(spec.ignore ? { ignore: spec.ignore } : {}),
  });
  if (!planned.ok) return planned;
  const { name, namespace } = ps.metadata;
  const budget = checkPruneBudget({
    deletions: spec.prune ? planned.value.plan.prune.length : 0,
    inventory: inventory.length,
    budget: spec.pruneBudget,
    revision,
    approved: ps.metadata.annotations?.[PRUNE_APPROVED],
    target: `pks/${name} -n ${namespace}`,
    annotation: PRUNE_APPROVED,
  });
  return ok({ ...planned.value, budget });
}
