/**
 * Entry point of the `packagesync` command: the controller and the everyday CLI, on one engine.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { configureRenderSandbox, describeSandbox, probeRenderSandbox } from './adapters/render/sandbox.ts';
import { defaultToolPaths } from './config/tool-paths.ts';
import { durationMs } from './api/packagesync.ts';
import { runController } from './controller/run.ts';
import { createLogger } from './config/logger.ts';
import { parseControllerConfig, type ControllerConfig } from './config/controller-config.ts';
import { registerCliCommands } from './cli/commands.ts';
import { startInClusterUi } from './cli/ui/in-cluster.ts';
import { parseBindAddress } from './server/http.ts';
import { CliError, ExitCode, errorMessage, exitCodeOf } from './cli/exit-codes.ts';
import { repoUrl } from './config/repo-root.ts';

export const program = new Command('packagesync')
  .description('GitOps for Kubernetes: keep a cluster equal to a package of manifests in git.')
  .showHelpAfterError()
  // Usage errors end in a CommanderError (inherited by every command) so they get exit code 2, not 1:
  // 1 is an answer (`diff` found changes), scripts must be able to tell it from a typo.
  .exitOverride();

/**
 * The defaults of the controller's flags: the config schema's (config/controller-config.ts), so a flag
 * omitted on the command line means what the schema says, and `--help` shows that value. A default written
 * here instead once overrode the schema (--render-cache-entries 256 against 8192: a requested resync of
 * 1,000 kustomize units hit the render cache 0 times).
 */
const configDefault = parseControllerConfig({});

/** The `controller` command's flags; a new command each call, so parsing one argv leaves no state behind. */
function controllerCommand(): Command {
  return new Command('controller')
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
      ).default(configDefault.concurrency),
    )
    .addOption(
      new Option('--apply-concurrency <n>', 'server-side apply requests in flight per reconcile').default(
        configDefault.applyConcurrency,
      ),
    )
    .option(
      '--default-service-account <name>',
      "impersonate this ServiceAccount for PackageSyncs that name none (default: none: the controller's own identity)",
    )
    .addOption(new Option('--allow-insecure-http', 'accept http:// git URLs').default(configDefault.allowInsecureHttp))
    .addOption(
      new Option(
        '--controller-namespace <ns>',
        "the controller's namespace: its PackageSyncs may place objects anywhere",
      ).default(configDefault.controllerNamespace),
    )
    .addOption(
      new Option(
        '--allow-cross-namespace-objects',
        'let every PackageSync place objects outside its namespace and cluster-scoped',
      ).default(configDefault.allowCrossNamespaceObjects),
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
      ).default(configDefault.driftCheckMinInterval),
    )
    .addOption(
      new Option(
        '--interval-jitter-percentage <percent>',
        'spread each requeue after a success by ± this percent of spec.interval, so units synced together do not ' +
          'come due together (Flux: the same flag)',
      ).default(configDefault.intervalJitterPercentage),
    )
    .addOption(
      new Option('--git-cache-dir <dir>', 'where fetched revisions are cached (default: $TMPDIR/packagesync-git)'),
    )
    .addOption(new Option('--git-timeout <duration>', 'deadline for one git fetch').default(configDefault.gitTimeout))
    .addOption(
      new Option(
        '--git-ref-cache-ttl <duration>',
        'reuse a resolved ref for PackageSyncs on the same URL, credentials and ref this long (0 = only concurrent ' +
          'resolves share one ls-remote); a push webhook or a requested reconcile asks git again at once',
      ).default(configDefault.gitRefCacheTtl),
    )
    .addOption(
      new Option(
        '--git-cache-max-bytes <n>',
        'keep the git cache under this size: least recently used checkouts, then cache repos, are removed ' +
          "(never one used in the last 5 minutes); fits deploy/'s 1Gi emptyDir",
      ).default(configDefault.gitCacheMaxBytes),
    )
    .addOption(
      new Option('--git-cache-max-age <duration>', 'remove checkouts and cache repos unused this long').default(
        configDefault.gitCacheMaxAge,
      ),
    )
    .addOption(new Option('--max-files <n>', 'most manifest files a package may hold').default(configDefault.maxFiles))
    .addOption(new Option('--max-file-bytes <n>', 'largest manifest file').default(configDefault.maxFileBytes))
    .addOption(new Option('--max-total-bytes <n>', 'largest package').default(configDefault.maxTotalBytes))
    .addOption(
      new Option('--oci-max-layer-bytes <n>', 'largest OCI artifact layer (compressed); unpacked: 4x this').default(
        configDefault.ociMaxLayerBytes,
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
      new Option('--render-timeout <duration>', 'longest one kustomize build or helm template may run').default(
        configDefault.renderTimeout,
      ),
    )
    .addOption(
      new Option('--render-max-output-bytes <n>', 'most output one kustomize build or helm template may write').default(
        configDefault.renderMaxOutputBytes,
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
        'address space (RLIMIT_AS) of one render subprocess or render worker; a Go tool reserves ~0.6 GiB of it before its heap',
      ).default(configDefault.renderMaxMemoryBytes),
    )
    .addOption(
      new Option(
        '--render-engine <engine>',
        'worker: kustomize and Helm as libraries in a pool of sandboxed long-lived workers (docs/adr/0038); subprocess: the pinned binaries once per render',
      )
        .choices(['worker', 'subprocess'])
        .default(configDefault.renderEngine),
    )
    .addOption(
      new Option(
        '--render-worker-path <path>',
        'the render worker (default: $RENDER_WORKER_BIN, the build of hack/build-cluster.sh, or /usr/local/bin/render-worker)',
      ),
    )
    .addOption(
      new Option(
        '--render-worker-kustomize-path <path>',
        'the render worker for kustomize, built without Helm (default: $RENDER_WORKER_KUSTOMIZE_BIN, the build of hack/build-cluster.sh, or /usr/local/bin/render-worker-kustomize)',
      ),
    )
    .addOption(
      new Option('--render-workers <n>', 'render workers at most, each rendering one package at a time').default(
        configDefault.renderWorkers,
      ),
    )
    .addOption(
      new Option(
        '--render-cache-entries <n>',
        'tool builds kept in memory, so a no-op resync runs no tool (0: none)',
      ).default(configDefault.renderCacheEntries),
    )
    .addOption(
      new Option(
        '--inventory-spill-threshold <n>',
        'an inventory of more objects than this moves from status into shard ConfigMaps (docs/inventory.md)',
      ).default(configDefault.inventorySpillThreshold),
    )
    .addOption(
      new Option('--inventory-shard-entries <n>', 'objects per inventory shard ConfigMap, on average').default(
        configDefault.inventoryShardEntries,
      ),
    )
    .addOption(
      new Option('--metrics-bind-address <addr>', 'serve /metrics here (host:port, :port; 0 disables)').default(
        configDefault.metricsBindAddress,
      ),
    )
    .addOption(
      new Option('--health-probe-bind-address <addr>', 'serve /healthz and /readyz here (0 disables)').default(
        configDefault.healthProbeBindAddress,
      ),
    )
    .addOption(
      new Option(
        '--webhook-bind-address <addr>',
        'serve the git push webhook (POST /hook/<namespace>/<name>) here, e.g. :9292 (0 disables; docs/webhook.md)',
      ).default(configDefault.webhookBindAddress),
    )
    .addOption(
      new Option(
        '--otlp-traces-endpoint <url>',
        'export a trace per reconcile (spans: fetch, render, plan, apply, health wait) over OTLP/HTTP to this URL, e.g. http://jaeger:4318/v1/traces (default: off)',
      ),
    )
    .addOption(
      new Option(
        '--ui-address <addr>',
        'serve the web UI here, e.g. :9090; every request needs a bearer token the API server accepts and acts ' +
          'with it, so RBAC decides (0 disables; docs/ui.md)',
      ).default(configDefault.uiAddress),
    )
    .addOption(
      new Option(
        '--ui-auth-proxy-identity <user>',
        'believe X-Remote-User / X-Remote-Group from requests whose bearer token is this user (an auth proxy, e.g. ' +
          'system:serviceaccount:auth:oauth2-proxy), and impersonate them (default: no proxy is believed)',
      ),
    )
    .addOption(
      new Option('--leader-elect', 'run as one of several replicas: only the holder of a Lease reconciles').default(
        configDefault.leaderElect,
      ),
    )
    .addOption(
      new Option('--leader-election-namespace <ns>', 'namespace of the leader Lease').default(
        configDefault.leaderElectionNamespace,
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
      ).default(configDefault.shutdownGrace),
    )
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal'])
        .default(configDefault.logLevel),
    );
}

/** The controller's configuration from its parsed flags: validated, durations checked; a usage error if not. */
function controllerConfigOf(raw: Record<string, unknown>): ControllerConfig {
  try {
    const config = parseControllerConfig(raw);
    durationMs(config.gitTimeout);
    durationMs(config.gitRefCacheTtl);
    durationMs(config.gitCacheMaxAge);
    durationMs(config.shutdownGrace);
    durationMs(config.renderTimeout);
    durationMs(config.driftCheckMinInterval);
    try {
      parseBindAddress(config.uiAddress);
    } catch (e) {
      throw new Error(`--ui-address: ${errorMessage(e)}`, { cause: e });
    }
    return config;
  } catch (e) {
    throw new CliError(ExitCode.Invalid, errorMessage(e));
  }
}

/**
 * What `packagesync controller <argv>` would run with (argv: the flags after `controller`; the environment
 * as it is): the same command and the same validation as the entry point, without starting anything.
 */
export function parseControllerArgs(argv: readonly string[]): ControllerConfig {
  let raw: Record<string, unknown> = {};
  controllerCommand()
    .exitOverride()
    .action((opts: Record<string, unknown>) => {
      raw = opts;
    })
    .parse([...argv], { from: 'user' });
  return controllerConfigOf(raw);
}

program.addCommand(
  controllerCommand()
    .copyInheritedSettings(program)
    .action(async (raw: Record<string, unknown>) => {
      const config = controllerConfigOf(raw);
      const ui = parseBindAddress(config.uiAddress)
        ? await startInClusterUi({
            kubeconfig: config.kubeconfig,
            bindAddress: config.uiAddress,
            authProxyIdentity: config.uiAuthProxyIdentity,
            namespace: config.watchNamespace,
            planArgs: [
              ...(config.allowInsecureHttp ? ['--allow-insecure-http'] : []),
              ...(config.sopsAgeSecret
                ? ['--sops-age-secret', `${config.controllerNamespace}/${config.sopsAgeSecret}`]
                : []),
            ],
          })
        : undefined;
      if (ui) createLogger(config.logLevel).info({ url: ui.url }, 'serving the web UI');
      try {
        await runController(config);
      } finally {
        await ui?.close();
      }
    }),
);

program
  .command('version')
  .description('Print the version, the render tools used, and what the kernel enforces on renders (Landlock).')
  .option('--render-sandbox-path <path>', 'the render launcher to ask (default: as the controller finds it)')
  .action(async (opts: { renderSandboxPath?: string }) => {
    if (opts.renderSandboxPath) configureRenderSandbox({ bin: opts.renderSandboxPath });
    const pkg = JSON.parse(readFileSync(repoUrl('package.json'), 'utf8')) as { version: string };
    const tools = defaultToolPaths();
    const probe = await probeRenderSandbox();
    console.log(`packagesync ${pkg.version}`);
    console.log(
      `kustomize: ${tools.kustomize}\nhelm: ${tools.helm}\nsops: ${tools.sops}\nrender worker: ${tools.worker}\nkustomize render worker: ${tools.workerKustomize}`,
    );
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
