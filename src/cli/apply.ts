/**
 * `packagesync apply DIR`: one reconcile's act and health steps without a controller, like
 * `kpt live apply`. The order is the controller's, for the same reason: save the inventory as old ∪ new
 * before anything is applied, apply over the dependency graph, prune only after every apply succeeded, then shrink
 * the inventory — so an apply interrupted at any point leaves no object unknown to the inventory.
 * Where the inventory lives: src/cli/inventory-store.ts.
 */
import { Option, type Command } from 'commander';
import type { Failure } from '../core/failure.ts';
import type { HealthSummary } from '../core/health/index.ts';
import { sameInventory } from '../core/inventory.ts';
import { describeRef, refKey, refOf } from '../core/object.ts';
import { summarizeChanges, type Change } from '../core/plan/changeset.ts';
import { applyAndPrune } from '../engine/act.ts';
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
        'apply in dependency order (server-side, best effort), prune what left the package, optionally wait until every object is healthy.',
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
  const { plan, inventory } = p;
  const out = (line: string) => process.stdout.write(`${line}\n`);
  let saved = inventory.entries;
  const changes: Change[] = [];
  let applyFailures: readonly Failure[] = [];

  const acted = await applyAndPrune(
    p.objects,
    plan,
    p.live,
    {
      prune: flags.prune,
      force: flags.force,
      signal,
      concurrency: APPLY_CONCURRENCY,
      sources: p.rendered.sources,
    },
    {
      // written only when it changes: a no-op apply writes nothing
      saveInventory: async (entries) => {
        if (!sameInventory(saved, entries)) await inventory.save(entries);
        saved = entries;
      },
      handled: (c) => void changes.push(...c),
      applyFailed: (failures) => void (applyFailures = failures),
    },
  );
  for (const c of changes) if (c.action !== 'unchanged') out(`${describeRef(c.ref)} ${c.action}`);
  if (applyFailures.length > 0) {
    for (const f of applyFailures) process.stderr.write(`error: ${f.reason}: ${f.message}\n`);
    out(`apply failed: nothing pruned; ${inventory.where} lists every object that may exist`);
    return signal.aborted ? ExitCode.Timeout : ExitCode.No;
  }
  if (!acted.ok) {
    process.stderr.write(`error: ${acted.failure.reason}: ${acted.failure.message}\n`);
    out(`prune failed: ${summarizeChanges(changes)}`);
    return ExitCode.No;
  }

  // objects annotated apply Ignore are not ours to judge (core/plan/object-policy.ts), as in a reconcile
  const managed = p.rendered.desired.filter((d) => !p.plan.ignored.has(refKey(refOf(d))));
  if (flags.wait && managed.length > 0) {
    let last: HealthSummary | undefined;
    const waited = await waitForHealth(p.objects, managed, {
      // the wait ends itself at its deadline with every unhealthy object named; the command's budget signal
      // would cut its last read short instead
      signal: new AbortController().signal,
      timeoutMs: Math.max(0, timeoutMs - (Date.now() - started)),
      onProgress: (s) => void process.stderr.write(`waiting for ${s.message}\n`),
      observed: (s) => void (last = s),
    });
    if (!waited.ok) {
      process.stderr.write(`error: ${waited.failure.reason}: ${waited.failure.message}\n`);
      out(`applied (${summarizeChanges(changes)}) but not healthy`);
      return (last?.counts.Failed ?? 0) > 0 ? ExitCode.No : ExitCode.Timeout;
    }
  }
  const unchanged = changes.filter((c) => c.action === 'unchanged').length;
  out(
    `${summarizeChanges(changes)}, ${unchanged} unchanged${flags.wait ? ', all healthy' : ''} ` +
      `(inventory: ${inventory.where}, ${acted.value.inventory.length} objects)`,
  );
  return ExitCode.Ok;
}
