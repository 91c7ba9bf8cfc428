/**
 * The cheapest answer to a periodic check: nothing changed since the last check found the package settled, told
 * before the PackageSync is even loaded (docs/adr/0031, "before loading"; docs/adr/0037).
 *
 * The settled check left its facts (settled-checkpoints.ts): the PackageSync's resourceVersion and parsed spec, its
 * Inputs digest and what it learnt of its source (engine/inputs.ts), and where its objects' copies are held. This
 * check compares:
 * - the resourceVersion of the copy the manager's watch holds (known to be current: not behind our own last
 *   write): any change of status (inventory, Ready), finalizers, deletion or annotations (a requested reconcile)
 *   changes it;
 * - the Inputs, read again as the full check reads them (`digestAgain`: the ref resolved through the shared,
 *   briefly cached ls-remote instead of a fetch), by their digest; and the dependsOn PackageSyncs' readiness;
 * - the inventoried objects' copies in the controller's watches: the same uid and resourceVersion as the settled
 *   check judged (found again where that check found them: no discovery, no lookups, nothing built per check).
 * Anything else, or anything it cannot read, sends the check down the full path, which decides. Kept only for a
 * git source acting as the controller in its own cluster, without spec.source.verify (the signature is checked on
 * the fetched commit) and with its inventory inline (shards are read with the PackageSync).
 */
import type { PackageSync, Spec } from '../api/packagesync.ts';
import type { InventoryEntry } from '../core/inventory.ts';
import type { KubeObject } from '../core/object.ts';
import { digestAgain } from './inputs.ts';
import { dependenciesReady } from './package-dependencies.ts';
import type { Ports } from './ports.ts';
import type { ReconcileResult } from './run.ts';
import { sameCopies, settledCopies, type HeldSource, type SettledFacts } from './settled-checkpoints.ts';

/** A reconcile's options this check needs. */
export interface UnchangedCheckOptions {
  signal: AbortSignal;
  strictSubstitutions?: boolean;
  defaultServiceAccount?: string;
}

/** The requeue of a check that found nothing changed, or undefined when the full check must decide. */
export async function unchangedBeforeLoading(
  namespace: string,
  name: string,
  ports: Ports,
  opts: UnchangedCheckOptions,
): Promise<ReconcileResult | undefined> {
  const held = ports.checkpoints?.facts(namespace, name);
  if (!held) return undefined;
  const ps = ports.packageSyncs.peekStored(namespace, name);
  const { facts } = held;
  if (!ps || ps.metadata.uid !== held.uid || ps.metadata.resourceVersion !== facts.resourceVersion) return undefined;
  const { spec } = facts;
  if ((spec.dependsOn?.length ?? 0) > 0 && !(await dependenciesReady(ps, spec, ports)).ok) return undefined;
  // the identity as the full check binds it (reconcile.ts); facts are kept only for the controller's own
  const serviceAccount = spec.serviceAccountName ?? opts.defaultServiceAccount;
  const context = {
    ps,
    spec,
    objects: () => ports.objects.forPackage({ namespace, name }, serviceAccount),
    ports,
    serviceAccount,
    strictSubstitutions: opts.strictSubstitutions ?? true,
    signal: opts.signal,
  };
  const again = await digestAgain(context, facts.source);
  if (again?.digest !== facts.inputs) return undefined;
  if (!sameCopies(ports.objects, facts.copies)) return undefined;
  ports.observe?.unchangedCheck?.('before-load');
  // the manager's logger for this reconcile already names the PackageSync
  ports.log.debug('nothing changed since the last settled check: render and plan skipped, before loading');
  return { failed: false, requeueAfterMs: facts.intervalMs };
}

/** What the settled check saw: its Inputs, the source it learnt, the inventory and live copies it judged. */
export interface SettledSeen {
  actsAsController: boolean;
  inputs: string;
  source: HeldSource;
  inventory: readonly InventoryEntry[];
  live: ReadonlyMap<string, KubeObject>;
}

/** What a settled check keeps for the next one to stop before loading, when that can be told (top of file). */
export async function settledFacts(
  ps: Readonly<PackageSync>,
  spec: Spec,
  c: SettledSeen,
  intervalMs: number,
  ports: Ports,
): Promise<SettledFacts | undefined> {
  const { resourceVersion } = ps.metadata;
  if (!c.actsAsController || !ports.source.resolve || resourceVersion === undefined) return undefined;
  if (spec.source.url === undefined || spec.source.verify !== undefined) return undefined;
  if (ps.status?.inventory?.shards !== undefined) return undefined;
  const copies = await settledCopies(ports.objects, c.inventory, c.live);
  if (!copies) return undefined;
  return {
    resourceVersion,
    spec,
    intervalMs,
    inputs: c.inputs,
    source: c.source,
    copies,
  };
}
