/**
 * `packagesync apply DIR`: one reconcile's act and health steps without a controller, like
 * `kpt live apply`. The order is the controller's, for the same reason: save the inventory as old ∪ new
 * before anything is applied, apply wave by wave, prune only after every apply succeeded, then shrink
 * the inventory — so an apply interrupted at any point leaves no object unknown to the inventory.
 * Where the inventory lives: src/cli/inventory-store.ts.
 */
import { Option, type Command } from 'commander';
import { refOfEntry } from '../api/inventory.ts';
import type { InventoryEntry } from '../api/packagesync.ts';
import { describeRef, refKey, refOf, type ObjectRef } from '../core/object.ts';
import { summarizeChanges, type Change } from '../core/plan/changeset.ts';
import { applyWaves } from '../engine/apply.ts';
import { pruneObjects } from '../engine/prune.ts';
import { waitForHealth } from '../engine/wait.ts';
import { kubeconfigOption, withCluster, type Cluster } from './cluster.ts';
import { ExitCode } from './exit-codes.ts';
import { parseTimeout } from './flags.ts';
import { packageOptions, planPackage, type PackageFlags } from './package-plan.ts';

interface ApplyFlags extends PackageFlags {
  kubeconfig?: string;
  wait: boolean;
  timeout: string;
}

/** The controller's default --apply-concurrency. */
const APPLY_CONCURRENCY = 32;

export function registerApply(program: Command): void {
  const cmd = program
    .command('apply')
    .summary('apply a package directory once, with inventory and prune')
    .description(
      'Apply a package directory once, with an inventory and prune, like `kpt live apply`: save the inventory, ' +
        'apply in waves (server-side), prune what left the package, optionally wait until every object is healthy.',
    )
    .argument('<dir>', 'package directory');
  for (const o of packageOptions()) cmd.addOption(o);
  cmd
    .addOption(new Option('--wait', 'wait until every applied object is healthy (kstatus Current)').default(false))
    .addOption(new Option('--timeout <duration>', 'budget for the whole apply, the health wait included').default('3m'))
    .addOption(kubeconfigOption())
    .action(async (dir: string, flags: ApplyFlags) => {
      const timeoutMs = parseTimeout(flags.timeout);
      process.exitCode = await withCluster(flags.kubeconfig, (cluster) => applyPackage(cluster, dir, flags, timeoutMs));
    });
}

async function applyPackage(cluster: Cluster, dir: string, flags: ApplyFlags, timeoutMs: number): Promise<number> {
  const started = Date.now();
  const signal = AbortSignal.timeout(timeoutMs);
  const p = await planPackage(cluster, dir, flags, true);
  const { plan, owner, inventory } = p;
  const prune = flags.prune ? plan.prune : [];
  const out = (line: string) => process.stdout.write(`${line}\n`);

  if (plan.toApply.size > 0 || prune.length > 0 || !sameEntries(inventory.entries, plan.inventoryDuringApply))
    await inventory.save(plan.inventoryDuringApply);
  const applied = await applyWaves(cluster.objects, plan.waves, (o) => plan.toApply.has(refKey(refOf(o))), {
    force: flags.force,
    signal,
    concurrency: APPLY_CONCURRENCY,
  });
  const changes: Change[] = [...applied.changes];
  for (const c of applied.changes) if (c.action !== 'unchanged') out(`${describeRef(c.ref)} ${c.action}`);
  if (applied.failures.length > 0) {
    for (const f of applied.failures) process.stderr.write(`error: ${f.reason}: ${f.message}\n`);
    out(`apply failed: nothing pruned; ${inventory.where} lists every object that may exist`);
    return signal.aborted ? ExitCode.Timeout : ExitCode.No;
  }

  const pruned = await pruneObjects(cluster.objects, prune, p.live, owner, { signal });
  for (const ref of pruned.pruned) {
    out(`${describeRef(ref)} pruned`);
    changes.push({ ref, action: 'pruned' });
  }
  // As the reconcile does: a failed delete keeps its entry so the next apply retries it; with --no-prune,
  // objects that left the package are released from the inventory and left in the cluster.
  const kept = pruned.kept.map((r) => plan.inventoryDuringApply.find((e) => sameRef(e, r))!).filter(Boolean);
  const after = [...plan.inventoryAfter, ...kept];
  if (!sameEntries(after, plan.inventoryDuringApply) || !sameEntries(inventory.entries, after))
    await inventory.save(after);
  if (pruned.failure) {
    process.stderr.write(`error: ${pruned.failure.reason}: ${pruned.failure.message}\n`);
    out(`prune failed: ${summarizeChanges(changes)}`);
    return ExitCode.No;
  }

  if (flags.wait && p.rendered.desired.length > 0) {
    const waited = await waitForHealth(cluster.objects, p.rendered.desired, owner, {
      // the wait ends itself at its deadline with every unhealthy object named; the command's budget signal
      // would cut its last read short instead
      signal: new AbortController().signal,
      timeoutMs: Math.max(0, timeoutMs - (Date.now() - started)),
      onProgress: (s) => void process.stderr.write(`waiting for ${s.message}\n`),
    });
    if (!waited.ok) {
      process.stderr.write(`error: ${waited.failure.reason}: ${waited.failure.message}\n`);
      out(`applied (${summarizeChanges(changes)}) but not healthy`);
      return waited.summary.counts.Failed > 0 ? ExitCode.No : ExitCode.Timeout;
    }
  }
  const unchanged = changes.filter((c) => c.action === 'unchanged').length;
  out(
    `${summarizeChanges(changes)}, ${unchanged} unchanged${flags.wait ? ', all healthy' : ''} ` +
      `(inventory: ${inventory.where}, ${after.length} objects)`,
  );
  return ExitCode.Ok;
}

function sameRef(entry: InventoryEntry, ref: ObjectRef): boolean {
  const r = refOfEntry(entry);
  return r.ok && refKey(r.value) === refKey(ref);
}

function sameEntries(a: InventoryEntry[], b: InventoryEntry[]): boolean {
  const key = (es: InventoryEntry[]) =>
    es
      .map((e) => `${e.id}=${e.v}`)
      .sort()
      .join('\n');
  return key(a) === key(b);
}
