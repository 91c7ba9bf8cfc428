/**
 * Deployment records to Notifiers (docs/adr/0040): watches Notifiers, keeps one NotifierRuntime per Notifier, and
 * hands each the PackageSync watch events of its namespace. Runs on the leader only, beside the manager: its
 * PackageSync watch is the manager's (no second watch, no engine change).
 */
import type { Logger } from 'pino';
import { GROUP, VERSION, type PackageSync } from '../../api/packagesync.ts';
import { NOTIFIER_PLURAL, type Notifier, type ProviderType } from '../../api/notifier.ts';
import type { Condition } from '../../api/status-schema.ts';
import { Informer, type InformerEvent } from '../../adapters/kube/informer.ts';
import { isNotFound, type KubeClient } from '../../adapters/kube/client.ts';
import { NotifierStore } from '../../adapters/kube/notifier-store.ts';
import { Sender } from '../../adapters/notify/sender.ts';
import type { KubeObject } from '../../core/object.ts';
import { errorText } from '../../core/failure.ts';
import { NotifierRuntime, type DeliveryResult } from './notifier-runtime.ts';
import type { LatestPlans } from './latest-plans.ts';

export interface NotifyControllerOptions {
  client: KubeClient;
  readSecret: (namespace: string, name: string) => Promise<Record<string, string> | undefined>;
  /** The manager's PackageSync watch cache. */
  packageSyncs: ReadonlyMap<string, KubeObject>;
  log: Logger;
  watchNamespace?: string;
  labelSelector?: string;
  /** --allow-insecure-http: http:// receivers are accepted too. */
  allowHttp?: boolean;
  onResult?: (provider: ProviderType, result: DeliveryResult) => void;
  sendTimeoutMs?: number;
  /** What each apply did (the engine's Ports.observe.changes feeds it): pull-request comments list it. */
  plans?: LatestPlans;
}

export const notifierCollectionPath = (namespace?: string) =>
  `/apis/${GROUP}/${VERSION}${namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/${NOTIFIER_PLURAL}`;

export class NotifyController {
  readonly informer: Informer;
  private readonly runtimes = new Map<string, NotifierRuntime>();
  private readonly opts: NotifyControllerOptions;
  private readonly store: NotifierStore;
  private readonly sender: Sender;

  constructor(opts: NotifyControllerOptions) {
    this.opts = opts;
    this.store = new NotifierStore(opts.client);
    this.sender = new Sender({ timeoutMs: opts.sendTimeoutMs ?? 15_000 });
    this.informer = new Informer(opts.client, {
      path: notifierCollectionPath(opts.watchNamespace),
      labelSelector: opts.labelSelector,
      onError: (e) => opts.log.warn({ err: errorText(e) }, 'Notifier watch interrupted; resuming'),
    });
    this.informer.on((event, obj) => this.onNotifier(event, obj as unknown as Notifier));
  }

  start(): void {
    this.informer.start();
  }

  /** Stops every Notifier; resolves once their state writes under way have landed (before a Lease is released). */
  async stop(): Promise<void> {
    this.informer.stop();
    const stopped = [...this.runtimes.values()].map((r) => r.stop());
    this.runtimes.clear();
    await Promise.all(stopped);
    await this.sender.close();
  }

  /** Every PackageSync watch event: each Notifier of its namespace looks at it. */
  onPackageSync(event: InformerEvent, obj: KubeObject): void {
    const ps = obj as unknown as PackageSync;
    if (event === 'delete') this.opts.plans?.forget(ps.metadata.namespace, ps.metadata.name);
    for (const r of this.runtimes.values()) {
      if (!r.key.startsWith(`${ps.metadata.namespace}/`)) continue;
      if (event === 'delete') r.packageSyncDeleted(ps);
      else r.packageSync(ps);
    }
  }

  /** Messages waiting in every outbox, and the age of the oldest (seconds). */
  stats(): { depth: number; oldestSeconds: number } {
    let depth = 0;
    let oldestSeconds = 0;
    for (const r of this.runtimes.values()) {
      const s = r.stats;
      depth += s.depth;
      oldestSeconds = Math.max(oldestSeconds, s.oldestSeconds);
    }
    return { depth, oldestSeconds };
  }

  private onNotifier(event: InformerEvent, n: Notifier): void {
    const key = `${n.metadata.namespace}/${n.metadata.name}`;
    const existing = this.runtimes.get(key);
    if (event === 'delete') {
      void existing?.stop();
      this.runtimes.delete(key);
      this.store.forget(n.metadata);
      return;
    }
    if (existing) return existing.update(n);
    this.runtimes.set(
      key,
      new NotifierRuntime(n, {
        store: this.store,
        sender: this.sender,
        readSecret: this.opts.readSecret,
        packageSyncs: () => [...this.opts.packageSyncs.values()] as unknown as PackageSync[],
        setCondition: (notifier, ready) => this.setReady(notifier, ready),
        onResult: (provider, result) => this.opts.onResult?.(provider, result),
        log: this.opts.log,
        allowHttp: this.opts.allowHttp ?? false,
        now: Date.now,
        random: Math.random,
        ...(this.opts.plans ? { plans: this.opts.plans } : {}),
      }),
    );
  }

  /** Writes the Ready condition when it says something new (status, reason or message). */
  private async setReady(
    n: Notifier,
    ready: { status: 'True' | 'False'; reason: string; message: string },
  ): Promise<void> {
    const current = (this.informer.get(n.metadata.namespace, n.metadata.name) as unknown as Notifier | undefined) ?? n;
    const old = current.status?.conditions?.find((c) => c.type === 'Ready');
    const generation = current.metadata.generation;
    if (
      old &&
      old.status === ready.status &&
      old.reason === ready.reason &&
      old.message === ready.message &&
      current.status?.observedGeneration === generation
    )
      return;
    const condition: Condition = {
      type: 'Ready',
      ...ready,
      lastTransitionTime: old && old.status === ready.status ? old.lastTransitionTime : new Date().toISOString(),
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
    try {
      await this.opts.client.request(
        'PATCH',
        `${notifierCollectionPath(n.metadata.namespace)}/${encodeURIComponent(n.metadata.name)}/status`,
        {
          contentType: 'application/merge-patch+json',
          body: { status: { observedGeneration: generation, conditions: [condition] } },
        },
      );
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
