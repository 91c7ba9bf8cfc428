/**
 * Entry point of the `packagesync` command: the controller and the everyday CLI, on one engine.
 */
import { Command, Option } from 'commander';
import { durationMs } from './api/packagesync.ts';
import { runController } from './controller/run.ts';
import { parseControllerConfig } from './config/controller-config.ts';
import { registerCliCommands } from './cli/commands.ts';
import { defaultLeaseNamespace } from './controller/leader-election.ts';

const program = new Command('packagesync')
  .description('GitOps for Kubernetes: keep a cluster equal to a package of manifests in git.')
  .showHelpAfterError();

program
  .command('controller')
  .description('Run the operator: watch PackageSyncs and reconcile them.')
  .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)')
  .option('--watch-namespace <ns>', 'watch one namespace only (default: all)')
  .option('--watch-label-selector <selector>', 'only PackageSyncs matching this label selector (sharding)')
  .addOption(new Option('--concurrency <n>', 'PackageSyncs reconciled at once').default(8))
  .addOption(new Option('--apply-concurrency <n>', 'server-side applies in flight per wave').default(32))
  .option('--default-service-account <name>', 'impersonate this ServiceAccount for PackageSyncs that name none')
  .addOption(new Option('--allow-insecure-http', 'accept http:// git URLs').default(false))
  .addOption(
    new Option(
      '--controller-namespace <ns>',
      "the controller's namespace: its PackageSyncs may place objects anywhere",
    ).default(process.env.POD_NAMESPACE ?? 'packagesync-system'),
  )
  .addOption(
    new Option(
      '--allow-cross-namespace-objects',
      'let every PackageSync place objects outside its namespace and cluster-scoped',
    ).default(false),
  )
  .addOption(
    new Option('--git-cache-dir <dir>', 'where fetched revisions are cached').default(
      undefined,
      '$TMPDIR/packagesync-git',
    ),
  )
  .addOption(new Option('--git-timeout <duration>', 'deadline for one git fetch').default('90s'))
  .addOption(new Option('--max-files <n>', 'most manifest files a package may hold').default(10_000))
  .addOption(new Option('--max-file-bytes <n>', 'largest manifest file').default(4 << 20))
  .addOption(new Option('--max-total-bytes <n>', 'largest package').default(64 << 20))
  .addOption(
    new Option('--metrics-bind-address <addr>', 'serve /metrics here (host:port, :port; 0 disables)').default(':8080'),
  )
  .addOption(
    new Option('--health-probe-bind-address <addr>', 'serve /healthz and /readyz here (0 disables)').default(':8081'),
  )
  .addOption(
    new Option('--leader-elect', 'run as one of several replicas: only the holder of a Lease reconciles').default(
      false,
    ),
  )
  .addOption(
    new Option('--leader-election-namespace <ns>', 'namespace of the leader Lease').default(
      defaultLeaseNamespace(),
      '$POD_NAMESPACE or packagesync-system',
    ),
  )
  .addOption(new Option('--shutdown-grace <duration>', 'time in-flight reconciles get on SIGTERM').default('20s'))
  .addOption(
    new Option('--log-level <level>', 'log level')
      .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal'])
      .default('info'),
  )
  .action(async (raw: Record<string, unknown>) => {
    const config = parseControllerConfig(raw);
    durationMs(config.gitTimeout);
    durationMs(config.shutdownGrace);
    await runController(config);
  });

registerCliCommands(program);

program.parseAsync(process.argv).catch((e: unknown) => {
  console.error(`packagesync: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
