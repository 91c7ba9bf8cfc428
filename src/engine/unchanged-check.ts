/**
 * The cheapest answer to a periodic check: nothing changed since the last check found the package settled, told
 * before the PackageSync is even loaded (docs/adr/0031, "before loading").
 *
 * The settled check left its facts (settled-checkpoints.ts): the PackageSync's resourceVersion, the commit its ref
 * named, its parsed spec and interval, the postBuild variables' digest and where its objects' copies are held.
 * This check compares:
 * - the resourceVersion of the copy the manager's watch holds (known to be current: not behind our own last
 *   write): any change of spec, status, inventory, finalizers or annotations (a requested reconcile) changes it;
 * - what the resourceVersion does not cover, read as the full check reads it: the dependsOn PackageSyncs'
 *   readiness, the source's Secret, the commit the ref names now (the shared, briefly cached ls-remote), the
 *   postBuild variables;
 * - the inventoried objects' copies in the controller's watches: the same uid and resourceVersion as the settled
 *   check judged (found again where that check found them: no discovery, no lookups, nothing built per check).
 * Anything else, or anything it cannot read, sends the check down the full path, which decides. Kept only for a
 * git source acting as the controller in its own cluster, without spec.source.verify (a key Secret changing is
 * not in any of the above) and with its inventory inline (shards are read with the PackageSync).
 */
import type { PackageSync, Spec } from '../api/packagesync.ts';
import type { InventoryEntry } from '../core/inventory.ts';
import type { KubeObject } from '../core/object.ts';
import { renderInputsDigest } from '../core/plan/checkpoint.ts';
import { dependenciesReady } from './package-dependencies.ts';
import type { Ports } from './ports.ts';
import type { ReconcileResult } from './run.ts';
import { sameCopies, settledCopies, type SettledFacts } from './settled-checkpoints.ts';
import { readCredentials } from './source-credentials.ts';
import { readSubstitution } from './substitution-inputs.ts';

/** A reconcile's options this check needs. */
export interface UnchangedCheckOptions {
  signal: AbortSignal;
  strictSubstitutions?: boolean;
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
  const credentials = await readCredentials(ps, spec, ports);
  if (!credentials.ok) return undefined;
  const commit = await ports.source.resolve?.(spec.source, credentials.value, opts.signal);
  if (!commit?.ok || commit.value !== facts.commit) return undefined;
  if (spec.postBuild !== undefined) {
    const substitution = await readSubstitution(namespace, spec.postBuild, ports, opts.strictSubstitutions ?? true);
    if (!substitution.ok || renderInputsDigest(substitution.value) !== facts.substitution) return undefined;
  }
  if (!sameCopies(ports.objects, facts.copies)) return undefined;
  ports.observe?.unchangedCheck?.('before-load');
  // the manager's logger for this reconcile already names the PackageSync
  ports.log.debug('nothing changed since the last settled check: render and plan skipped, before loading');
  return { failed: false, requeueAfterMs: facts.intervalMs };
}

/** What the settled check saw: the ref's commit, the inventory, substitution and live copies it judged. */
export interface SettledSeen {
  actsAsController: boolean;
  commit: string;
  inventory: readonly InventoryEntry[];
  substitution: unknown;
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
    commit: c.commit,
    spec,
    intervalMs,
    substitution: renderInputsDigest(c.substitution),
    copies,
  };
}
