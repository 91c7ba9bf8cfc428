/**
 * `packagesync why NAME`: the chain from a PackageSync to the first real cause of it not being Ready, one
 * line a step (a dependsOn not Ready; a workload, its ReplicaSet, the Pod and its reason: ImagePullBackOff on
 * image X). Reads as the CLI's identity: the PackageSync, its dependencies, the inventory's workloads and their
 * ReplicaSets and Pods; core/health/cause-chain.ts decides what to say. The workloads are read in the cluster
 * the PackageSync applies to: with spec.kubeConfig.secretRef, the one that Secret names (target-objects.ts).
 */
import { Option, type Command } from 'commander';
import type { PackageSync } from '../api/packagesync.ts';
import type { Objects } from '../adapters/kube/objects.ts';
import { causeChain, computeHealth, isWorkload } from '../core/health/index.ts';
import { refOfEntry } from '../core/inventory.ts';
import type { KubeObject } from '../core/object.ts';
import { conditionOf, isReadyFor } from '../core/status.ts';
import { kubeconfigOption, namespaceOption, withCluster, type Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { withTargetObjects } from './target-objects.ts';

interface WhyFlags {
  namespace?: string;
  output: 'text' | 'json';
  kubeconfig?: string;
}

export function registerWhy(program: Command): void {
  program
    .command('why')
    .summary('why a PackageSync is not Ready: the chain to the first real cause')
    .description(
      'The chain from a PackageSync to the first real cause: a dependsOn not Ready, or a workload, its ' +
        'ReplicaSet and the Pod with its reason (ImagePullBackOff on image X). Exit 0 when Ready, 1 otherwise.',
    )
    .argument('<name>', 'the PackageSync')
    .addOption(namespaceOption())
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .addOption(kubeconfigOption())
    .action(async (name: string, flags: WhyFlags) => {
      process.exitCode = await withCluster(flags.kubeconfig, async (cluster) => {
        const namespace = flags.namespace ?? cluster.contextNamespace;
        const ps = await cluster.packageSyncs.get(namespace, name);
        if (!ps) throw new CliError(ExitCode.Invalid, `PackageSync ${namespace}/${name} not found`);
        const chain = await whyChain(cluster, ps);
        const upToDate = isReadyFor(ps.status, ps.metadata.generation);
        process.stdout.write(
          flags.output === 'json'
            ? `${JSON.stringify({ ready: upToDate, chain }, null, 2)}\n`
            : `${chain.join('\n')}\n`,
        );
        return upToDate ? ExitCode.Ok : ExitCode.No;
      });
    });
}

/** The chain from `ps` to the first real cause, one line a step: what `why` prints, and the web UI shows. */
export async function whyChain(cluster: Cluster, ps: PackageSync): Promise<string[]> {
  return causeChain({
    packageSync: {
      name: `${ps.metadata.namespace}/${ps.metadata.name}`,
      ready: conditionOf(ps.status, 'Ready'),
    },
    dependencies: await dependencies(cluster, ps),
    workloads: await withTargetObjects(cluster, ps, (objects) => unhealthyWorkloads(objects, ps)),
  });
}

async function dependencies(cluster: Cluster, ps: PackageSync) {
  return Promise.all(
    (ps.spec.dependsOn ?? []).map(async (d) => {
      const ns = d.namespace ?? ps.metadata.namespace;
      const dep = await cluster.packageSyncs.get(ns, d.name);
      return { name: `${ns}/${d.name}`, ready: dep ? conditionOf(dep.status, 'Ready') : undefined };
    }),
  );
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
