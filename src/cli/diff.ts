/**
 * `packagesync diff DIR`: what applying the package would change, asked of the API server itself. Each
 * object the planner would send goes through a server-side apply with dryRun=All (defaults, admission
 * and field ownership included), and the answer is diffed against the live copy. Then the objects a
 * prune would delete. Exit 0: no changes; 1: changes; 2 and above: errors (docs/cli.md).
 */
import type { Command } from 'commander';
import PQueue from 'p-queue';
import { isNotFound } from '../adapters/kube/client.ts';
import { applyFailure } from '../adapters/kube/objects.ts';
import { describeRef, refKey, refOf, type KubeObject, type ObjectRef } from '../core/object.ts';
import { mayPrune } from '../core/plan/ownership.ts';
import { kubeconfigOption, withCluster, type Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { objectDiff } from './object-diff.ts';
import { findOwnedObjects } from './owned-objects.ts';
import { objectsToApply, packageOptions, planPackage, type PackageFlags, type PackagePlan } from './package-plan.ts';

interface DiffFlags extends PackageFlags {
  kubeconfig?: string;
}

export function registerDiff(program: Command): void {
  const cmd = program
    .command('diff')
    .summary('what applying a package directory would change (server-side dry run)')
    .description(
      'Show what applying a package directory would change: a unified diff per object, from a server-side ' +
        'dry run against the cluster, then the objects a prune would delete. Exit 0: no changes, 1: changes.',
    )
    .argument('<dir>', 'package directory');
  for (const o of packageOptions()) cmd.addOption(o);
  cmd.addOption(kubeconfigOption()).action(async (dir: string, flags: DiffFlags) => {
    process.exitCode = await withCluster(flags.kubeconfig, (cluster) => diffPackage(cluster, dir, flags));
  });
}

interface ObjectOutcome {
  obj: KubeObject;
  text: string;
  created: boolean;
  error?: string;
}

async function diffPackage(cluster: Cluster, dir: string, flags: DiffFlags): Promise<number> {
  const p = await planPackage(cluster, dir, flags, false);
  const queue = new PQueue({ concurrency: 16 });
  const outcomes = await Promise.all(
    // drift (an object changed in the cluster at the revision applied) is taken back as apply takes it back
    objectsToApply(p).map((obj) =>
      queue.add(() => dryRun(cluster, p, obj, flags.force || p.plan.takeBack.has(refKey(refOf(obj))))),
    ),
  );
  const pruned = flags.prune ? await pruneDiffs(cluster, p) : { texts: [], kept: [] };

  for (const o of outcomes) if (o.text) process.stdout.write(o.text);
  for (const text of pruned.texts) process.stdout.write(text);

  const failed = outcomes.filter((o) => o.error);
  for (const o of failed) process.stderr.write(`error: ${o.error}\n`);
  for (const k of pruned.kept) process.stderr.write(`${k}\n`);
  const changed = outcomes.filter((o) => o.text && !o.error);
  const created = changed.filter((o) => o.created).length;
  const summary = [
    `${created} to create`,
    `${changed.length - created} to configure`,
    `${pruned.texts.length} to prune`,
    `${p.rendered.desired.length - changed.length - failed.length} unchanged`,
  ];
  process.stderr.write(
    `${summary.join(', ')} (inventory: ${p.inventory.where}${p.inventory.exists ? '' : ', none yet'})\n`,
  );
  if (failed.length > 0) throw new CliError(ExitCode.Cluster, `${failed.length} object(s) could not be dry-run`);
  return changed.length + pruned.texts.length > 0 ? ExitCode.No : ExitCode.Ok;
}

async function dryRun(cluster: Cluster, p: PackagePlan, obj: KubeObject, force: boolean): Promise<ObjectOutcome> {
  const live = p.live.get(refKey(refOf(obj)));
  try {
    const res = await cluster.objects.apply(obj, { dryRun: true, force });
    return { obj, text: objectDiff(live, res.object), created: !live };
  } catch (e) {
    // A new object whose Namespace or CRD the same package brings cannot be dry-run before those exist;
    // what would be created is then the object as sent.
    if (!live && isNotFound(e)) return { obj, text: objectDiff(undefined, obj), created: true };
    const failure = applyFailure(obj, e);
    return { obj, text: '', created: false, error: `${failure.reason}: ${failure.message}` };
  }
}

/** Deletion diffs of what a prune would delete, and notes on what it would keep. */
async function pruneDiffs(cluster: Cluster, p: PackagePlan): Promise<{ texts: string[]; kept: string[] }> {
  let candidates: { ref: ObjectRef; live: KubeObject | undefined }[];
  const kept: string[] = [];
  if (p.inventory.exists) {
    candidates = p.plan.prune.map((ref) => ({ ref, live: p.live.get(refKey(ref)) }));
  } else {
    // No inventory anywhere: whatever carries this owner's labels and is no longer in the package.
    const owned = await findOwnedObjects(cluster.objects, p.owner);
    const desired = new Set(p.rendered.desired.map((o) => refKey(refOf(o))));
    candidates = [...owned.byKey.entries()]
      .filter(([key]) => !desired.has(key))
      .map(([, live]) => ({ ref: refOf(live), live }));
    if (owned.unreadable.length > 0)
      kept.push(`note: could not look for owned objects of ${owned.unreadable.join(', ')} (forbidden)`);
  }
  const texts: string[] = [];
  for (const { ref, live } of candidates) {
    if (!live) continue; // already gone
    if (!mayPrune(live, p.owner)) {
      kept.push(`note: ${describeRef(ref)} left the package but is kept (not labelled as ours, or prune disabled)`);
      continue;
    }
    texts.push(objectDiff(live, undefined));
  }
  return { texts, kept };
}
