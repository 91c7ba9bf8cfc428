/**
 * Entry point of the `packagesync` command: the controller and the everyday CLI, on one engine.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { configureRenderSandbox, describeSandbox, probeRenderSandbox } from './adapters/render/sandbox.ts';
import { defaultToolPaths } from './config/tool-paths.ts';
import { durationMs } from './api/packagesync.ts';
import { runController } from './controller/run.ts';
import { parseControllerConfig } from './config/controller-config.ts';
import { registerCliCommands } from './cli/commands.ts';
import { CliError, ExitCode, errorMessage, exitCodeOf } from './cli/exit-codes.ts';
import { defaultLeaseNamespace } from './controller/leader-election.ts';

export const program = new Command('packagesync')
  .description('GitOps for Kubernetes: keep a cluster equal to a package of manifests in git.')
  .showHelpAfterError()
  // Usage errors end in a CommanderError (inherited by every command) so they get exit code 2, not 1:
  // 1 is an answer (`diff` found changes), scripts must be able to tell it from a typo.
  .exitOverride();

program
  .command('controller')
  .description('Run the operator: watch PackageSyncs and reconcile them.')
  .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)')
  .option('--watch-namespace <ns>', 'watch one namespace only (default: all)')
  .option(
    '--watch-label-selector <selector>',
    'only PackageSyncs matching this label selector: sharding, docs/deploy.md (default: all)',
  )
  .addOption(
    new Option(
      '--concurrency <n>',
      'PackageSyncs reconciled at once (one waiting for health gives its worker back)',
    ).default(8),
  )
  .addOption(new Option('--apply-concurrency <n>', 'server-side apply requests in flight per reconcile').default(32))
  .option(
    '--default-service-account <name>',
    "impersonate this ServiceAccount for PackageSyncs that name none (default: none: the controller's own identity)",
  )
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
    new Option(
      '--no-cross-namespace-refs',
      "refuse references to another namespace's objects (spec.dependsOn[].namespace) with InvalidSpec, as Flux's " +
        'flag of the same name; the multi-tenant install sets it (docs/tenancy.md) (default: allowed)',
    ),
  )
  .addOption(
    new Option(
      '--no-strict-substitutions',
      'postBuild: an undefined ${var} becomes "" instead of failing, as in Flux before 2.9 (default: fail)',
    ),
  )
  .addOption(
    new Option(
      '--no-watch-configs',
      'do not watch the ConfigMaps and Secrets PackageSyncs reference: their changes wait for the interval ' +
        '(default: watch, docs/deploy.md)',
    ),
  )
  .addOption(
    new Option(
      '--watch-configs-label-selector <selector>',
      'watch only referenced ConfigMaps and Secrets matching this selector, e.g. owner!=helm (default: all, metadata only)',
    ),
  )
  .addOption(
    new Option(
      '--no-drift-watch',
      'do not watch the objects PackageSyncs applied: a change made in the cluster waits for the interval ' +
        '(default: watch, docs/drift.md)',
    ),
  )
  .addOption(
    new Option(
      '--drift-check-min-interval <duration>',
      'after a watch event on a managed object, check its PackageSync at most this often',
    ).default('5s'),
  )
  .addOption(
    new Option(
      '--interval-jitter-percentage <percent>',
      'spread each requeue after a success by ± this percent of spec.interval, so units synced together do not ' +
        'come due together (Flux: the same flag)',
    ).default('5'),
  )
  .addOption(
    new Option('--git-cache-dir <dir>', 'where fetched revisions are cached (default: $TMPDIR/packagesync-git)'),
  )
  .addOption(new Option('--git-timeout <duration>', 'deadline for one git fetch').default('90s'))
  .addOption(
    new Option(
      '--git-ref-cache-ttl <duration>',
      'reuse a resolved ref for PackageSyncs on the same URL, credentials and ref this long (0 = only concurrent ' +
        'resolves share one ls-remote); a push webhook or a requested reconcile asks git again at once',
    ).default('2s'),
  )
  .addOption(
    new Option(
      '--git-cache-max-bytes <n>',
      'keep the git cache under this size: least recently used checkouts, then cache repos, are removed ' +
        "(never one used in the last 5 minutes); fits deploy/'s 1Gi emptyDir",
    ).default(768 << 20),
  )
  .addOption(
    new Option('--git-cache-max-age <duration>', 'remove checkouts and cache repos unused this long').default('24h'),
  )
  .addOption(new Option('--max-files <n>', 'most manifest files a package may hold').default(10_000))
  .addOption(new Option('--max-file-bytes <n>', 'largest manifest file').default(4 << 20))
  .addOption(new Option('--max-total-bytes <n>', 'largest package').default(64 << 20))
  .addOption(
    new Option('--oci-max-layer-bytes <n>', 'largest OCI artifact layer (compressed); unpacked: 4x this').default(
      64 << 20,
    ),
  )
  .addOption(
    new Option(
      '--kustomize-path <path>',
      'the kustomize binary (default: $KUSTOMIZE_BIN, the pinned build of hack/build-cluster.sh, or /usr/local/bin/kustomize)',
    ),
  )
  .addOption(
    new Option(
      '--helm-path <path>',
      'the helm binary (default: $HELM_BIN, the pinned build of hack/build-cluster.sh, or /usr/local/bin/helm)',
    ),
  )
  .addOption(
    new Option(
      '--sops-path <path>',
      'the sops binary for spec.decryption (default: $SOPS_BIN, the pinned build of hack/build-cluster.sh, or /usr/local/bin/sops)',
    ),
  )
  .addOption(
    new Option(
      '--sops-age-secret <name>',
      "a Secret in the controller's namespace (--controller-namespace) whose .agekey entries decrypt for every " +
        "PackageSync with spec.decryption but no secretRef, as Flux's --sops-age-secret (default: none)",
    ),
  )
  .addOption(
    new Option('--render-timeout <duration>', 'longest one kustomize build or helm template may run').default('60s'),
  )
  .addOption(
    new Option('--render-max-output-bytes <n>', 'most output one kustomize build or helm template may write').default(
      64 << 20,
    ),
  )
  .addOption(
    new Option(
      '--render-sandbox-path <path>',
      'the launcher that confines every render tool with Landlock (default: $RENDER_SANDBOX_BIN, the build of hack/build-cluster.sh, or /usr/local/bin/render-sandbox)',
    ),
  )
  .addOption(
    new Option(
      '--render-max-memory-bytes <n>',
      'address space (RLIMIT_AS) of one render subprocess; a Go tool reserves ~0.6 GiB of it before its heap',
    ).default(1 << 30),
  )
  .addOption(
    new Option(
      '--render-cache-entries <n>',
      'tool builds kept in memory, so a no-op resync runs no tool (0: none)',
    ).default(256),
  )
  .addOption(
    new Option(
      '--inventory-spill-threshold <n>',
      'an inventory of more objects than this moves from status into shard ConfigMaps (docs/inventory.md)',
    ).default(4000),
  )
  .addOption(
    new Option('--inventory-shard-entries <n>', 'objects per inventory shard ConfigMap, on average').default(8192),
  )
  .addOption(
    new Option('--metrics-bind-address <addr>', 'serve /metrics here (host:port, :port; 0 disables)').default(':8080'),
  )
  .addOption(
    new Option('--health-probe-bind-address <addr>', 'serve /healthz and /readyz here (0 disables)').default(':8081'),
  )
  .addOption(
    new Option(
      '--webhook-bind-address <addr>',
      'serve the git push webhook (POST /hook/<namespace>/<name>) here, e.g. :9292 (0 disables; docs/webhook.md)',
    ).default('0'),
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
  .addOption(
    new Option(
      '--leader-election-id <name>',
      'name of the leader Lease; each shard needs its own (default: packagesync-controller-leader, ' +
        'suffixed with a hash of --watch-label-selector when one is set)',
    ),
  )
  .addOption(
    new Option(
      '--shutdown-grace <duration>',
      'on SIGTERM: time to finish in-flight reconciles, abandon the rest and release the Lease; exit within it',
    ).default('20s'),
  )
  .addOption(
    new Option('--log-level <level>', 'log level')
      .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal'])
      .default('info'),
  )
  .action(async (raw: Record<string, unknown>) => {
    let config;
    try {
      config = parseControllerConfig(raw);
      durationMs(config.gitTimeout);
      durationMs(config.gitRefCacheTtl);
      durationMs(config.gitCacheMaxAge);
      durationMs(config.shutdownGrace);
      durationMs(config.renderTimeout);
      durationMs(config.driftCheckMinInterval);
    } catch (e) {
      throw new CliError(ExitCode.Invalid, errorMessage(e));
    }
    await runController(config);
  });

program
  .command('version')
  .description('Print the version, the render tools used, and what the kernel enforces on renders (Landlock).')
  .option('--render-sandbox-path <path>', 'the render launcher to ask (default: as the controller finds it)')
  .action(async (opts: { renderSandboxPath?: string }) => {
    if (opts.renderSandboxPath) configureRenderSandbox({ bin: opts.renderSandboxPath });
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    const tools = defaultToolPaths();
    const probe = await probeRenderSandbox();
    console.log(`packagesync ${pkg.version}`);
    console.log(`kustomize: ${tools.kustomize}\nhelm: ${tools.helm}\nsops: ${tools.sops}`);
    console.log(`render sandbox: ${probe.bin}; landlock=${probe.landlock} abi=${probe.abi}`);
    console.log(describeSandbox(probe));
  });

registerCliCommands(program);

/** Runs the command line; the exit code is a contract (src/cli/exit-codes.ts). */
export function main(argv: string[] = process.argv): void {
  program.parseAsync(argv).catch((e: unknown) => {
    // commander has already printed its own usage errors and the help text
    if (!(e instanceof CommanderError)) console.error(`packagesync: ${errorMessage(e)}`);
    process.exitCode = exitCodeOf(e);
  });
}

// `node src/main.ts …` (the image's entrypoint, the e2e tests) and bin/packagesync.js both run it.
if (import.meta.main) main();
