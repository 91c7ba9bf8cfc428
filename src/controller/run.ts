/** Wires the real adapters into the engine and runs the manager until SIGTERM/SIGINT. */
import { KubeClient } from '../adapters/kube/client.ts';
import { Discovery } from '../adapters/kube/discovery.ts';
import { Objects } from '../adapters/kube/objects.ts';
import { PackageSyncs } from '../adapters/kube/packagesyncs.ts';
import { Secrets } from '../adapters/kube/secrets.ts';
import { createGitSource } from '../adapters/git/source-port.ts';
import { durationMs, type PackageSync } from '../api/packagesync.ts';
import type { ControllerConfig } from '../config/controller-config.ts';
import { createLogger } from '../config/logger.ts';
import type { Ports } from '../engine/ports.ts';
import { controllerReadiness, metricsRoutes, probeRoutes, startHttpServers } from '../server/http.ts';
import { createMetrics } from '../server/metrics.ts';
import { LeaderElector, leaderIdentity } from './leader-election.ts';
import { Manager, errorText } from './manager.ts';

export async function runController(config: ControllerConfig): Promise<void> {
  const log = createLogger(config.logLevel);
  const metrics = createMetrics();
  const client = await KubeClient.create({ kubeconfig: config.kubeconfig, onRequest: metrics.onApiRequest });
  const discovery = new Discovery(client);
  await discovery.refresh();
  const secrets = new Secrets(client);
  const ports: Ports = {
    objects: new Objects(client, discovery),
    packageSyncs: new PackageSyncs(client),
    secrets,
    source: metrics.instrumentSource(await createGitSource(config, log)),
    log,
    observe: metrics.objects,
  };
  const manager = new Manager(client, ports, {
    watchNamespace: config.watchNamespace,
    labelSelector: config.watchLabelSelector,
    concurrency: config.concurrency,
    applyConcurrency: config.applyConcurrency,
    defaultServiceAccount: config.defaultServiceAccount,
    namespacePolicy: {
      controllerNamespace: config.controllerNamespace,
      allowCrossNamespace: config.allowCrossNamespaceObjects,
    },
    onQueueDepth: metrics.setQueue,
    onReconciled: metrics.observeReconcile,
  });
  // packagesync_condition mirrors the watch: every status write comes back as an update event.
  manager.informer.on((event, obj) => {
    if (event === 'delete') metrics.forget(obj.metadata.namespace ?? '', obj.metadata.name);
    else metrics.setConditions(obj as unknown as PackageSync);
  });
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
          controllerReadiness({ leaderElection: config.leaderElect, leading: elector?.isLeader ?? false, watchSynced }),
        ),
      },
    ],
    (e, path) => log.error({ err: errorText(e), path }, 'HTTP handler failed'),
  );
  log.info({ addresses: servers.addresses.map((a) => `${a.address}:${a.port}`) }, 'serving metrics and probes');

  const startManager = () => {
    manager.start();
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
      identity: leaderIdentity(),
      log,
      onStartedLeading: startManager,
      onStoppedLeading: (why) => {
        if (why !== 'lost') return;
        // As controller-runtime does: another replica may lead by now, so stop reconciling at once and exit;
        // the kubelet restarts the pod, which rejoins as a standby.
        log.fatal('leader lease lost: exiting');
        setTimeout(() => process.exit(1), 5_000).unref();
        void manager.stop(0).finally(() => process.exit(1));
      },
      onNewLeader: (identity) => log.info({ leader: identity }, 'leader observed'),
    });
    log.info(
      { candidate: elector.identity, namespace: config.leaderElectionNamespace },
      'waiting for the leader lease',
    );
    elector.start();
  } else {
    startManager();
  }

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down: finishing in-flight reconciles');
      const grace = durationMs(config.shutdownGrace);
      manager
        .stop(grace)
        .catch((e: unknown) => log.error({ err: errorText(e) }, 'shutdown'))
        // Release the lease only once nothing is in flight, so the next leader never overlaps with us.
        .then(() => elector?.stop())
        .finally(() => {
          void servers.close();
          void client.close();
          resolve();
        });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  log.info('stopped');
}
