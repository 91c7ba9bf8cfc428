/** Wires the real adapters into the engine and runs the manager until SIGTERM/SIGINT. */
import { KubeClient } from '../adapters/kube/client.ts';
import { Discovery } from '../adapters/kube/discovery.ts';
import { Objects } from '../adapters/kube/objects.ts';
import { PackageSyncs } from '../adapters/kube/packagesyncs.ts';
import { Secrets } from '../adapters/kube/secrets.ts';
import { createGitSource } from '../adapters/git/source-port.ts';
import { durationMs } from '../api/packagesync.ts';
import type { ControllerConfig } from '../config/controller-config.ts';
import { createLogger } from '../config/logger.ts';
import type { Ports } from '../engine/ports.ts';
import { Manager, errorText } from './manager.ts';

export async function runController(config: ControllerConfig): Promise<void> {
  const log = createLogger(config.logLevel);
  const client = await KubeClient.create({ kubeconfig: config.kubeconfig });
  const discovery = new Discovery(client);
  await discovery.refresh();
  const secrets = new Secrets(client);
  const ports: Ports = {
    objects: new Objects(client, discovery),
    packageSyncs: new PackageSyncs(client),
    secrets,
    source: await createGitSource(config, log),
    log,
  };
  const manager = new Manager(client, ports, {
    watchNamespace: config.watchNamespace,
    labelSelector: config.watchLabelSelector,
    concurrency: config.concurrency,
    applyConcurrency: config.applyConcurrency,
    defaultServiceAccount: config.defaultServiceAccount,
  });
  manager.start();
  log.info(
    { server: client.server, watchNamespace: config.watchNamespace ?? '(all)', selector: config.watchLabelSelector, concurrency: config.concurrency },
    'controller started',
  );
  await manager.informer.synced;
  log.info({ packagesyncs: manager.informer.cache.size }, 'PackageSync watch synced');

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down: finishing in-flight reconciles');
      const grace = durationMs(config.shutdownGrace);
      manager
        .stop(grace)
        .catch((e: unknown) => log.error({ err: errorText(e) }, 'shutdown'))
        .finally(() => {
          void client.close();
          resolve();
        });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  log.info('stopped');
}
