/**
 * `packagesync why NAME`: the chain from a PackageSync to the first real cause of it not being Ready, one line a
 * link with its message (core/health/why-chain.ts decides what to say): the Ready condition's reason and words
 * (a file:line, an object and field, the API server's words), each object that failed to apply, a dependsOn
 * not Ready followed into its own chain, and the inventory's workloads not Current down to their Pods
 * (ImagePullBackOff on image X). A dependsOn cycle ends the chain with a line naming it.
 *
 * Reads as the CLI's identity: the PackageSync and the dependencies not Ready (as far as DEPENDENCY_LIMIT), their
 * inventories' workloads and the ReplicaSets and Pods beside them. The workloads are read in the cluster each
 * PackageSync applies to: with spec.kubeConfig.secretRef, the one that Secret names (target-objects.ts).
 */
import { Option, type Command } from 'commander';
import type { PackageSync } from '../api/packagesync.ts';
import { setWhyLines } from '../core/rollout/why.ts';
import type { Objects } from '../engine/ports.ts';
import { computeHealth, isWorkload, whyChain, whyText, type PackageFacts, type WhyLink } from '../core/health/index.ts';
import { refOfEntry } from '../core/inventory.ts';
import type { KubeObject } from '../core/object.ts';
import { conditionOf, isReadyFor } from '../core/status.ts';
import { kubeconfigOption, namespaceOption, withCluster, type Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { getSet, setArgument } from './set-ref.ts';
import { withTargetObjects } from './target-objects.ts';

interface WhyFlags {
  namespace?: string;
  output: 'text' | 'json';
  kubeconfig?: string;
}

/** How many PackageSyncs a chain reads at most (the root and the dependencies not Ready below it). */
const DEPENDENCY_LIMIT = 64;

export function registerWhy(program: Command): void {
  program
    .command('why')
    .summary('why a PackageSync is not Ready: the chain to the first real cause')
    .description(
      'The chain from a PackageSync to the first real cause, each link with its message: the Ready reason ' +
        "(file:line of a render failure, the API server's words), a dependsOn not Ready followed into its own " +
        'chain, or a workload, its ReplicaSet and the Pod with its reason (ImagePullBackOff on image X). ' +
        'A dependsOn cycle ends the chain with a line naming it. Exit 0 when Ready, 1 otherwise.',
    )
    .argument('<name>', 'the PackageSync, or packagesyncset/NAME for a rollout: the gate it waits on and why')
    .addOption(namespaceOption())
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .addOption(kubeconfigOption())
    .action(async (name: string, flags: WhyFlags) => {
      process.exitCode = await withCluster(flags.kubeconfig, async (cluster) => {
        const namespace = flags.namespace ?? cluster.contextNamespace;
        const setName = setArgument(name);
        if (setName) return whySet(cluster, namespace, setName, flags.output);
        const ps = await cluster.packageSyncs.get(namespace, name);
        if (!ps) throw new CliError(ExitCode.Invalid, `PackageSync ${namespace}/${name} not found`);
        const links = await whyLinks(cluster, ps);
        const chain = whyText(links);
        const upToDate = isReadyFor(ps.status, ps.metadata.generation);
        process.stdout.write(
          flags.output === 'json'
            ? `${JSON.stringify({ ready: upToDate, chain, links: links.map(({ text: _text, ...l }) => l) }, null, 2)}\n`
            : `${chain.join('\n')}\n`,
        );
        return upToDate ? ExitCode.Ok : ExitCode.No;
      });
    });
}

/** A set's rollout: phase, the blocking gate of which wave and why, the targets not healthy (core/rollout/why.ts). */
async function whySet(cluster: Cluster, namespace: string, name: string, output: WhyFlags['output']): Promise<number> {
  const set = await getSet(cluster, namespace, name);
  const ready = isReadyFor(set.status, set.metadata.generation);
  const chain = setWhyLines(`${namespace}/${name}`, set.status);
  process.stdout.write(
    output === 'json'
      ? `${JSON.stringify({ ready, chain, blockedBy: set.status?.blockedBy ?? null }, null, 2)}\n`
      : `${chain.join('\n')}\n`,
  );
  return ready ? ExitCode.Ok : ExitCode.No;
}

/** The links from `ps` to the first real cause: what `why` prints, and the web UI shows. */
export async function whyLinks(cluster: Cluster, ps: PackageSync): Promise<WhyLink[]> {
  const facts = await readFacts(cluster, ps);
  return whyChain(keyOf(ps), (n) => facts.get(n));
}

/** The same chain as text, one line a link. */
export async function whyLines(cluster: Cluster, ps: PackageSync): Promise<string[]> {
  return whyText(await whyLinks(cluster, ps));
}

/**
 * The facts of the PackageSync and of every dependency not Ready below it, by `namespace/name` (a name not in
 * the map does not exist). Ready dependencies are not followed: they are not the cause.
 */
async function readFacts(cluster: Cluster, root: PackageSync): Promise<Map<string, PackageFacts>> {
  const facts = new Map<string, PackageFacts>();
  const read = new Set<string>();
  const pending: { key: string; ps?: PackageSync }[] = [{ key: keyOf(root), ps: root }];
  while (pending.length > 0 && read.size < DEPENDENCY_LIMIT) {
    const next = pending.shift()!;
    if (read.has(next.key)) continue;
    read.add(next.key);
    const [ns, name] = next.key.split('/') as [string, string];
    let ps: PackageSync | undefined;
    try {
      ps = next.ps ?? (await cluster.packageSyncs.get(ns, name));
    } catch (e) {
      // a dependency in a namespace this identity may not read: say so on its link, with the API server's words
      const message = `could not be read: ${e instanceof Error ? e.message : String(e)}`;
      facts.set(next.key, { ready: { status: 'Unknown', reason: 'Unreadable', message } });
      continue;
    }
    if (!ps) continue;
    const ready = conditionOf(ps.status, 'Ready');
    const dependsOn = (ps.spec.dependsOn ?? []).map((d) => `${d.namespace ?? ns}/${d.name}`);
    const notReady = ready?.status !== 'True';
    facts.set(next.key, {
      ...(ready ? { ready: { status: ready.status, reason: ready.reason, message: ready.message } } : {}),
      failures: ps.status?.failures ?? [],
      dependsOn,
      workloads: notReady ? await workloadsOf(cluster, ps, ps === root) : [],
    });
    if (notReady) pending.push(...dependsOn.map((key) => ({ key })));
  }
  return facts;
}

const keyOf = (ps: PackageSync) => `${ps.metadata.namespace}/${ps.metadata.name}`;

/**
 * The workloads of a PackageSync's inventory that are not Current. The root's cluster must be reachable (the
 * command fails saying why); a dependency's that is not is left out: its Ready message already says why.
 */
async function workloadsOf(cluster: Cluster, ps: PackageSync, isRoot: boolean) {
  try {
    return await withTargetObjects(cluster, ps, (objects) => unhealthyWorkloads(objects, ps));
  } catch (e) {
    if (isRoot || !(e instanceof CliError)) throw e;
    return [];
  }
}

/** The inventory's workloads that are not Current, each with the ReplicaSets and Pods of its namespace. */
async function unhealthyWorkloads(objects: Objects, ps: PackageSync) {
  const refs = (ps.status?.inventory?.entries ?? []).flatMap((e) => {
    const r = refOfEntry(e);
    return r.ok ? [r.value] : [];
  });
  const live = await Promise.all(refs.map((ref) => objects.get(ref)));
  const workloads = live.filter(
    (o): o is KubeObject => o !== undefined && isWorkload(o) && computeHealth(o).status !== 'Current',
  );
  const children = new Map<string, KubeObject[]>();
  const childrenOf = async (ns: string) => {
    if (!children.has(ns)) {
      const lists = await Promise.all(
        [
          ['', 'Pod'],
          ['apps', 'ReplicaSet'],
        ].map(async ([group, kind]) => {
          const m = await objects.discovery.mapping(group!, kind!);
          return m ? objects.list(m, ns, '') : [];
        }),
      );
      children.set(ns, lists.flat());
    }
    return children.get(ns)!;
  };
  return Promise.all(
    workloads.map(async (workload) => ({ workload, children: await childrenOf(workload.metadata.namespace ?? '') })),
  );
}
