/**
 * What `diff` and `apply` share with a reconcile, steps 3 and 4 of the pipeline: render the directory
 * (with the cluster's discovery answering which kinds are namespaced), read the live copies, and let
 * core/plan decide what to apply and what to prune. Same functions, same decisions as the controller.
 */
import { Option } from 'commander';
import { refKey, refOf, type KubeObject } from '../core/object.ts';
import { planChanges, type ChangePlan } from '../core/plan/plan-changes.ts';
import type { Owner } from '../core/plan/ownership.ts';
import { readLiveState } from '../engine/live.ts';
import type { Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { openInventory, type InventoryStore } from './inventory-store.ts';
import { renderDir, type RenderedDir } from './local-package.ts';
import { substituteOptions, substitutionFromFlags, type SubstituteFlags } from './substitute-flags.ts';

export interface PackageFlags extends SubstituteFlags {
  name: string;
  namespace?: string;
  targetNamespace?: string;
  allowEmpty: boolean;
  prune: boolean;
  force: boolean;
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
  new Option('--force', "spec.force: take over fields other managers own (server-side apply's force)").default(false),
  ...substituteOptions(),
];

export interface PackagePlan {
  owner: Owner;
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
  await cluster.discovery.refresh();
  const rendered = await renderDir(dir, {
    owner,
    targetNamespace: flags.targetNamespace,
    isNamespaced: (g, k) => cluster.discovery.isNamespaced(g, k),
    allowEmpty: flags.allowEmpty,
    substitution: await substitutionFromFlags(flags),
  });
  const inventory = await openInventory(cluster, owner, forWrite);
  const live = await readLiveState(cluster.objects, rendered.desired, inventory.entries, owner, {});
  if (!live.ok) throw new CliError(ExitCode.Cluster, `${live.failure.reason}: ${live.failure.message}`);
  const planned = planChanges(rendered.desired, inventory.entries, live.value.byKey, owner);
  if (!planned.ok) throw new CliError(ExitCode.Invalid, `${planned.failure.reason}: ${planned.failure.message}`);
  return { owner, rendered, inventory, live: live.value.byKey, plan: planned.plan };
}

/** The objects to send, as they will be sent, in apply order. */
export function objectsToApply(p: PackagePlan): KubeObject[] {
  return p.plan.waves.flat().filter((o) => p.plan.toApply.has(refKey(refOf(o))));
}
