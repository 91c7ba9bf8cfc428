/** Wires the real adapters into the engine and runs the manager until SIGTERM/SIGINT. */
import { readFileSync } from 'node:fs';
import { createChartSource } from '../adapters/chart/source-port.ts';
import { withChartDependencies } from '../adapters/chart/git-chart-dependencies.ts';
import { createCheckoutStore } from '../adapters/oci/checkout-store.ts';
import { createOciSource, sourceBySpec } from '../adapters/oci/index.ts';
import { createSopsDecryptor } from '../adapters/render/sops.ts';
import { KubeClient } from '../adapters/kube/client.ts';
import { Discovery } from '../adapters/kube/discovery.ts';
import { Objects } from '../adapters/kube/objects.ts';
import { RemoteClusters } from '../adapters/kube/remote-clusters.ts';
import { packageSyncCollectionPath } from '../adapters/kube/packagesyncs.ts';
import { WatchedLive } from '../adapters/kube/live-cache.ts';
import { WatchedPackageSyncs } from './watched-package-syncs.ts';
import { Secrets } from '../adapters/kube/secrets.ts';
import { ConfigMaps } from '../adapters/kube/configmaps.ts';
import { WatchCache } from '../adapters/kube/watch-cache.ts';
import { OwnWrites } from '../adapters/kube/own-writes.ts';
import { DriftWatch } from './drift-watch.ts';
import { SettledCheckpoints } from '../engine/settled-checkpoints.ts';
import { createGitSource } from '../adapters/git/source-port.ts';
import { createRenderer, type Renderer } from '../adapters/render/build.ts';
import { configureRenderSandbox, describeSandbox, probeRenderSandbox } from '../adapters/render/sandbox.ts';
import { durationMs, RECONCILE_REQUESTED_AT, type PackageSync } from '../api/packagesync.ts';
import { leaderElectionId, type ControllerConfig } from '../config/controller-config.ts';
import { createLogger } from '../config/logger.ts';
import type { Ports } from '../engine/ports.ts';
import { otlpTracing } from '../adapters/otel/tracing.ts';
import { controllerReadiness, metricsRoutes, probeRoutes, startHttpServers } from '../server/http.ts';
import { createMetrics } from '../server/metrics.ts';
import { webhookRoutes } from '../server/webhook.ts';
import { LatestPlans } from './notify/latest-plans.ts';
import { NotifyController } from './notify/notify-controller.ts';
import { SetController } from './rollout/set-controller.ts';
import { LeaderElector, leaderIdentity } from './leader-election.ts';
import { Manager } from './manager.ts';
import { errorText } from '../core/failure.ts';
import { gitUrlsOf } from '../core/source-address.ts';
import { repoUrl } from '../config/repo-root.ts';

/** The controller's renderer, as its flags configure it. */
export function controllerRenderer(config: ControllerConfig): Renderer {
  return createRenderer({
    kustomizePath: config.kustomizePath,
    helmPath: config.helmPath,
    limits: {
      timeoutMs: durationMs(config.renderTimeout),
      maxOutputBytes: config.renderMaxOutputBytes,
      maxFiles: config.maxFiles,
    },
    cacheEntries: config.renderCacheEntries,
    engine: config.renderEngine,
    // the workers read the checkouts: every git and OCI checkout lives under the git cache directory
    worker: {
      bin: config.renderWorkerPath,
      kustomizeBin: config.renderWorkerKustomizePath,
      size: config.renderWorkers,
      readRoots: [config.gitCacheDir],
    },
  });
}

export async function runController(config: ControllerConfig): Promise<void> {
  const log = createLogger(config.logLevel);
  const metrics = createMetrics();
  const client = await KubeClient.create({ kubeconfig: config.kubeconfig, onRequest: metrics.onApiRequest });
  const discovery = new Discovery(client);
  await discovery.refresh();
  const secrets = new Secrets(client);
  // Health watches hold a connection each for as long as they run: they get their own pool, so they can
  // never take the connections applies and status writes need.
  const watchClient = await KubeClient.create({
    kubeconfig: config.kubeconfig,
    onRequest: metrics.onApiRequest,
    connections: 256,
  });
  const watches = new WatchCache(watchClient, discovery, { log });
  // every render tool runs under the kernel sandbox; say at start-up what this kernel enforces
  configureRenderSandbox({ bin: config.renderSandboxPath, maxMemoryBytes: config.renderMaxMemoryBytes });
  const sandbox = await probeRenderSandbox();
  metrics.observeSandbox(sandbox);
  if (sandbox.landlock === 'enforced') log.info({ landlockAbi: sandbox.abi }, describeSandbox(sandbox));
  else log.warn({ landlock: sandbox.landlock, landlockAbi: sandbox.abi }, describeSandbox(sandbox));
  const renderer = controllerRenderer(config);
  metrics.observeRenderer(() => renderer.stats());
  const objects = new Objects(client, discovery);
  const ownWrites = new OwnWrites();
  objects.ownWrites = ownWrites;
  // a settled unit's check reads its objects from the watches the drift watch holds (live-cache.ts)
  const liveCache = new WatchedLive(watches, ownWrites);
  objects.liveCache = liveCache;
  metrics.observeLiveCache(() => liveCache.stats);
  const packageSyncs = new WatchedPackageSyncs(client, undefined, {
    spillAbove: config.inventorySpillThreshold,
    shardEntries: config.inventoryShardEntries,
  });
  const clusters = new RemoteClusters(client, { client: { onRequest: metrics.onApiRequest }, log });
  const tracing = config.otlpTracesEndpoint
    ? await otlpTracing(config.otlpTracesEndpoint, { version: packageVersion() })
    : undefined;
  // one bounded store of unpacked archives (OCI artifacts, charts): one eviction sees them all
  const archives = createCheckoutStore(config);
  // the chart source reads values from git beside a chart (spec.source.chart.values) through the same git source
  const git = await createGitSource(config, log);
  const plans = new LatestPlans();
  const ports: Ports = {
    ...(tracing ? { tracing } : {}),
    objects,
    clusters,
    packageSyncs,
    secrets,
    configMaps: new ConfigMaps(client),
    source: metrics.instrumentSource(
      sourceBySpec(
        // a chart in git whose dependencies are not vendored gets them fetched (docs/adr/0041)
        withChartDependencies(git, { ...config, helmPath: config.helmPath }, archives, log),
        createOciSource(config, log, archives),
        createChartSource({ ...config, helmPath: config.helmPath }, log, archives, git),
      ),
    ),
    log,
    render: renderer,
    decryptor: createSopsDecryptor({
      bin: config.sopsPath,
      timeoutMs: durationMs(config.renderTimeout),
      maxOutputBytes: config.renderMaxOutputBytes,
    }),
    ...(config.sopsAgeSecret
      ? { sopsAgeSecret: { namespace: config.controllerNamespace, name: config.sopsAgeSecret } }
      : {}),
    // an apply's object list goes to the pull-request comments of its revision (docs/adr/0043)
    observe: { ...metrics.objects, changes: (ps, revision, changes) => plans.record(ps, revision, changes) },
    watches,
    // a settled unit's periodic check stops before rendering when nothing changed (ADR 0031); it reads the
    // live copies from the watches the drift watch holds, so it needs them
    ...(config.driftWatch ? { checkpoints: new SettledCheckpoints() } : {}),
  };
  const manager = new Manager(client, ports, {
    watchNamespace: config.watchNamespace,
    labelSelector: config.watchLabelSelector,
    concurrency: config.concurrency,
    intervalJitterPercent: config.intervalJitterPercentage,
    applyConcurrency: config.applyConcurrency,
    defaultServiceAccount: config.defaultServiceAccount,
    strictSubstitutions: config.strictSubstitutions,
    noCrossNamespaceRefs: !config.crossNamespaceRefs,
    watchConfigs: config.watchConfigs,
    watchConfigsLabelSelector: config.watchConfigsLabelSelector,
    namespacePolicy: {
      controllerNamespace: config.controllerNamespace,
      allowCrossNamespace: config.allowCrossNamespaceObjects,
    },
    onQueueDepth: metrics.setQueue,
    onReconciled: metrics.observeReconcile,
    // the watchdog (ADR 0032): its worker is already given back; this says which PackageSync, and for how long
    onOverdue: (key, overdue, budgetMs) => {
      metrics.setOverdue(overdue, true);
      log.error(
        { packageSync: key, budgetSeconds: budgetMs / 1000, overdue },
        'reconcile outlived spec.timeout and its margin: its worker goes to the others; it is reported until it ends',
      );
    },
    onOverdueEnded: (key, overdue, ranMs) => {
      metrics.setOverdue(overdue, false);
      log.warn({ packageSync: key, seconds: ranMs / 1000, overdue }, 'overdue reconcile ended');
    },
  });
  // the reconcile's load step reads the manager's watch when its copy is current (watched-package-syncs.ts)
  packageSyncs.readFrom(manager.informer.cache);
  // self-heal: a managed object changed by someone else queues its PackageSync within seconds (drift-watch.ts)
  const driftWatch = config.driftWatch
    ? new DriftWatch(watches, ownWrites, (key) => manager.queue.add(key), {
        minIntervalMs: durationMs(config.driftCheckMinInterval),
        log,
        onCheck: () => metrics.driftCheck(),
      })
    : undefined;
  if (driftWatch) {
    // an inventory in shards (ADR 0027) is read (cached by shard) before its kinds are known
    manager.informer.on((event, obj) => {
      const ps = obj as unknown as PackageSync;
      if (event === 'delete' || !ps.status?.inventory?.shards?.length) return driftWatch.track(event, ps);
      packageSyncs.expand(ps).then(
        // deleted while its shards were read: the delete event already let its watches go
        (whole) => manager.informer.get(ps.metadata.namespace, ps.metadata.name) && driftWatch.track(event, whole),
        (e: unknown) =>
          log.warn({ err: String(e), packageSync: ps.metadata.name }, 'drift watch: inventory unreadable'),
      );
    });
  }
  // packagesync_condition mirrors the watch: every status write comes back as an update event.
  manager.informer.on((event, obj) => {
    if (event === 'delete') {
      metrics.forget(obj.metadata.namespace ?? '', obj.metadata.name);
      ports.checkpoints?.forget(obj.metadata.namespace ?? '', obj.metadata.name);
      packageSyncs.forget(obj);
    } else metrics.setConditions(obj as unknown as PackageSync);
  });
  // deployment records (docs/adr/0040): derived from the same watch, delivered by the leader through each
  // Notifier's outbox ConfigMap
  const notify = new NotifyController({
    client,
    readSecret: (ns, name) => secrets.read(ns, name),
    packageSyncs: manager.informer.cache,
    log: log.child({ component: 'notify' }),
    watchNamespace: config.watchNamespace,
    labelSelector: config.watchLabelSelector,
    allowHttp: config.allowInsecureHttp,
    onResult: (provider, result) => metrics.notifications.onResult(provider, result),
    plans,
  });
  metrics.notifications.observe(() => notify.stats());
  manager.informer.on((event, obj) => notify.onPackageSync(event, obj));
  // PackageSyncSets (docs/adr/0042): children are PackageSyncs of the same watch; a child's change wakes its set
  const rollouts = new SetController({
    client,
    source: ports.source,
    readSecret: (ns, name) => secrets.read(ns, name),
    packageSyncs: manager.informer.cache,
    packageSyncsSynced: manager.informer.synced,
    log: log.child({ component: 'rollout' }),
    watchNamespace: config.watchNamespace,
    labelSelector: config.watchLabelSelector,
    allowHttp: config.allowInsecureHttp,
    defaultServiceAccount: config.defaultServiceAccount,
  });
  manager.informer.on((event, obj) => rollouts.onPackageSync(event, obj));
  let watchSynced = false;
  void manager.informer.synced.then(() => {
    watchSynced = true;
    log.info({ packagesyncs: manager.informer.cache.size }, 'PackageSync watch synced');
  });

  let elector: LeaderElector | undefined;
  const servers = await startHttpServers(
    [
      { bindAddress: config.metricsBindAddress, routes: metricsRoutes(metrics) },
      {
        bindAddress: config.healthProbeBindAddress,
        routes: probeRoutes(() =>
          controllerReadiness({
            leaderElection: config.leaderElect,
            leading: elector?.isLeader ?? false,
            watchSynced,
            overdue: manager.queue.overdue.length,
            concurrency: config.concurrency,
          }),
        ),
      },
      {
        bindAddress: config.webhookBindAddress,
        routes: webhookRoutes({
          // the leader's watch cache answers without a request; a standby (no watch) asks the API server
          list: async (ns) =>
            watchSynced
              ? [...manager.informer.cache.values()]
                  .map((o) => o as unknown as PackageSync)
                  .filter((p) => p.metadata.namespace === ns)
              : (
                  await client.request<{ items: PackageSync[] }>('GET', packageSyncCollectionPath(ns), {
                    query: { labelSelector: config.watchLabelSelector },
                  })
                ).items,
          readSecret: (ns, name) => secrets.read(ns, name),
          // A push is a newer revision: the leader queues at once, stopping a run still waiting for the old
          // revision's health; a standby asks the leader through the reconcile-requested-at annotation.
          trigger: async (refs) => {
            for (const r of refs) {
              // a push moved a ref: no PackageSync may reuse what ls-remote said before it
              const source = (manager.informer.cache.get(`${r.namespace}/${r.name}`) as PackageSync | undefined)?.spec
                ?.source;
              for (const url of gitUrlsOf(source)) ports.source.forget?.(url);
              if (watchSynced) manager.queue.supersede(`${r.namespace}/${r.name}`);
              else
                await packageSyncs.setAnnotation(r.namespace, r.name, RECONCILE_REQUESTED_AT, new Date().toISOString());
            }
          },
          log,
        }),
      },
    ],
    (e, path) => log.error({ err: errorText(e), path }, 'HTTP handler failed'),
  );
  log.info({ addresses: servers.addresses.map((a) => `${a.address}:${a.port}`) }, 'serving metrics and probes');

  const startManager = () => {
    manager.start();
    notify.start();
    // only where the PackageSyncSet CRD is installed: a cluster without it runs PackageSyncs as before
    rollouts.served().then(
      (served) =>
        served ? rollouts.start() : log.info('PackageSyncSet is not served (CRD not installed): rollouts off'),
      (e: unknown) => log.error({ err: errorText(e) }, 'could not ask whether PackageSyncSet is served: rollouts off'),
    );
    log.info(
      {
        server: client.server,
        watchNamespace: config.watchNamespace ?? '(all)',
        selector: config.watchLabelSelector,
        concurrency: config.concurrency,
      },
      'controller started',
    );
  };
  if (config.leaderElect) {
    elector = new LeaderElector({
      client,
      namespace: config.leaderElectionNamespace,
      name: leaderElectionId(config),
      identity: leaderIdentity(),
      log,
      onStartedLeading: startManager,
      onStoppedLeading: (why) => {
        if (why !== 'lost') return;
        // As controller-runtime does: another replica may lead by now, so stop reconciling at once and exit;
        // the kubelet restarts the pod, which rejoins as a standby.
        log.fatal('leader lease lost: exiting');
        setTimeout(() => process.exit(1), 5_000).unref();
        // the Notifiers and the sets too: a message sent, an outbox written or a set's children applied from here
        // on could race the next leader's
        void Promise.all([manager.stop(0), notify.stop(), rollouts.stop(0)]).finally(() => process.exit(1));
      },
      onNewLeader: (identity) => log.info({ leader: identity }, 'leader observed'),
    });
    log.info(
      { candidate: elector.identity, namespace: config.leaderElectionNamespace, lease: leaderElectionId(config) },
      'waiting for the leader lease',
    );
    elector.start();
  } else {
    startManager();
  }

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      // All of shutdown fits in --shutdown-grace, so it ends before the kubelet's SIGKILL: in-flight
      // reconciles get most of it, then are abandoned (they leave status as their last write left it, and
      // the next leader takes them up); the rest is for releasing the Lease and closing connections.
      const grace = durationMs(config.shutdownGrace);
      const reserve = Math.min(5_000, grace / 4);
      log.info(
        { signal, inFlight: manager.queue.depth, graceSeconds: grace / 1000 },
        'shutting down: taking no new work, finishing in-flight reconciles',
      );
      setTimeout(() => {
        log.error('shutdown did not finish within --shutdown-grace: exiting without releasing the lease');
        process.exit(1);
      }, grace).unref();
      manager
        .stop(grace - reserve)
        .then(() => notify.stop())
        .then(() => rollouts.stop())
        // the last reconciles' spans leave before the process does
        .then(() => tracing?.shutdown())
        .catch((e: unknown) => log.error({ err: errorText(e) }, 'shutdown'))
        // Release the lease only once nothing is in flight, so the next leader never overlaps with us.
        .then(() => elector?.stop())
        .finally(() => {
          void servers.close();
          driftWatch?.stop();
          watches.stop();
          renderer.close();
          void clusters.close();
          void watchClient.close();
          void client.close();
          resolve();
        });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  log.info('stopped');
  // Everything is closed; should a stray handle keep the event loop alive, do not outstay the grace period.
  setTimeout(() => process.exit(process.exitCode ?? 0), 1_000).unref();
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(repoUrl('package.json'), 'utf8')) as { version: string }).version;
}
