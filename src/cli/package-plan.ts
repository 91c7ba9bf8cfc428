/**
 * What `diff` and `apply` share with a reconcile, steps 3 and 4 of the pipeline (engine/package-plan.ts):
 * render the directory with the cluster's discovery, read the live copies, and let core/plan decide what to
 * apply and what to prune. Same functions, same decisions as the controller.
 */
import { Option } from 'commander';
import type { PackageObjects } from '../engine/ports.ts';
import { Reason } from '../api/reasons.ts';
import type { Failure } from '../core/failure.ts';
import { refKey, refOf, type KubeObject } from '../core/object.ts';
import type { ChangePlan } from '../core/plan/plan-changes.ts';
import type { Owner } from '../core/plan/ownership.ts';
import { planAgainstLive } from '../engine/package-plan.ts';
import type { Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { openInventory, type InventoryStore } from './inventory-store.ts';
import { renderDir, type RenderedDir } from './local-package.ts';
import { substituteOptions, substitutionFromFlags, type SubstituteFlags } from './substitute-flags.ts';
import { decryptOptions, identitiesFromFile } from './decrypt.ts';

export interface PackageFlags extends SubstituteFlags {
  name: string;
  namespace?: string;
  targetNamespace?: string;
  allowEmpty: boolean;
  prune: boolean;
  pruneProtectedKinds: boolean;
  force: boolean;
  ageKeyFile?: string;
}

/** spec.targetNamespace, for every command that renders a package. */
export const targetNamespaceOption = () =>
  new Option(
    '--target-namespace <ns>',
    'spec.targetNamespace: namespaced objects that name no namespace go there (default: none)',
  );

/** The flags `diff` and `apply` take, mirroring the PackageSync spec fields they stand for. */
export const packageOptions = (): Option[] => [
  new Option(
    '--name <name>',
    'the PackageSync the objects belong to: owner labels, inventory (required)',
  ).makeOptionMandatory(),
  new Option(
    '-n, --namespace <ns>',
    "the PackageSync's namespace, where namespaced objects that name none go (default: the kubeconfig context's, or default)",
  ),
  targetNamespaceOption(),
  new Option('--allow-empty', 'spec.allowEmpty: a package of no objects is valid (and prunes everything)').default(
    false,
  ),
  new Option('--no-prune', 'spec.prune: false: never delete objects that left the package (default: prune)'),
  new Option(
    '--prune-protected-kinds',
    'spec.pruneProtectedKinds: also delete Namespaces, CRDs, PVs and PVCs that left the package (default: leave them)',
  ).default(false),
  new Option('--force', "spec.force: take over fields other managers own (server-side apply's force)").default(false),
  ...substituteOptions(),
  ...decryptOptions(),
];

export interface PackagePlan {
  owner: Owner;
  /** The package's objects, as the CLI's own identity. */
  objects: PackageObjects;
  rendered: RenderedDir;
  inventory: InventoryStore;
  /** refKey → live object, for every desired or inventoried object that exists. */
  live: Map<string, KubeObject>;
  plan: ChangePlan;
}

export async function planPackage(
  cluster: Cluster,
  dir: string,
  flags: PackageFlags,
  forWrite: boolean,
): Promise<PackagePlan> {
  const owner = { name: flags.name, namespace: flags.namespace ?? cluster.contextNamespace };
  const objects = cluster.objects.forPackage(owner);
  await cluster.discovery.refresh();
  const rendered = await renderDir(dir, {
    owner,
    targetNamespace: flags.targetNamespace,
    discovery: cluster.discovery,
    allowEmpty: flags.allowEmpty,
    substitution: await substitutionFromFlags(flags),
    decrypt: await identitiesFromFile(flags.ageKeyFile),
  });
  const inventory = await openInventory(cluster, owner, forWrite);
  const planned = await planAgainstLive(objects, rendered.desired, inventory.entries, {
    sources: rendered.sources,
    pruneProtectedKinds: flags.pruneProtectedKinds,
  });
  if (!planned.ok) throw planFailure(planned.failure);
  const { live, plan } = planned.value;
  return { owner, objects, rendered, inventory, live: live.byKey, plan };
}

/** A failed plan step as the CLI's error: another PackageSync's objects or a bad graph are the package's problem; anything else is the cluster's. */
export function planFailure({ reason, message }: Failure): CliError {
  const code =
    reason === Reason.OwnershipConflict || reason === Reason.InvalidDependency ? ExitCode.Invalid : ExitCode.Cluster;
  return new CliError(code, `${reason}: ${message}`);
}

/** The objects to send, as they will be sent, in apply order. */
export function objectsToApply(p: PackagePlan): KubeObject[] {
  const { nodes, order } = p.plan.graph;
  return order.map((i) => nodes[i]!.object).filter((o) => p.plan.toApply.has(refKey(refOf(o))));
}
