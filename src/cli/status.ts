/** `packagesync status [NAME]`: how one or all PackageSyncs are doing, for people (table, block) or scripts (json). */
import { Option, type Command } from 'commander';
import type { PackageSync } from '../api/packagesync.ts';
import { packageSyncCollectionPath } from '../adapters/kube/packagesyncs.ts';
import { kubeconfigOption, namespaceOption, withCluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { formatDetail, formatTable, summarize, type StatusSummary } from './status-summary.ts';

interface StatusFlags {
  namespace?: string;
  allNamespaces: boolean;
  selector?: string;
  output: 'text' | 'json';
  kubeconfig?: string;
}

export function registerStatus(program: Command): void {
  program
    .command('status')
    .summary('how one or all PackageSyncs are doing')
    .description(
      'Summarise one PackageSync (NAME) or all of a namespace: Ready, reason, message, revision, objects, history. ' +
        'Exit 0 when every one shown is Ready for its current generation, 1 otherwise.',
    )
    .argument('[name]', 'one PackageSync; all when omitted')
    .addOption(namespaceOption())
    .addOption(new Option('-A, --all-namespaces', 'every namespace').default(false))
    .addOption(new Option('-l, --selector <selector>', 'only PackageSyncs matching this label selector (default: all)'))
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .addOption(kubeconfigOption())
    .action(async (name: string | undefined, flags: StatusFlags) => {
      if (name && flags.allNamespaces)
        throw new CliError(ExitCode.Invalid, 'give a NAME or --all-namespaces, not both');
      process.exitCode = await withCluster(flags.kubeconfig, async (cluster) => {
        const namespace = flags.namespace ?? cluster.contextNamespace;
        const now = new Date();
        if (name) {
          const ps = await cluster.packageSyncs.get(namespace, name);
          if (!ps) throw new CliError(ExitCode.Invalid, `PackageSync ${namespace}/${name} not found`);
          const s = summarize(ps);
          process.stdout.write(flags.output === 'json' ? `${JSON.stringify(s, null, 2)}\n` : formatDetail(s, now));
          return s.upToDate ? ExitCode.Ok : ExitCode.No;
        }
        const list = await cluster.client.request<{ items: PackageSync[] }>(
          'GET',
          packageSyncCollectionPath(flags.allNamespaces ? undefined : namespace),
          { query: { labelSelector: flags.selector } },
        );
        const all: StatusSummary[] = list.items
          .map(summarize)
          .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
        if (flags.output === 'json') process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
        else if (all.length === 0)
          process.stderr.write(`No PackageSyncs found${flags.allNamespaces ? '' : ` in namespace ${namespace}`}.\n`);
        else process.stdout.write(formatTable(all, now, flags.allNamespaces));
        return all.every((s) => s.upToDate) ? ExitCode.Ok : ExitCode.No;
      });
    });
}
