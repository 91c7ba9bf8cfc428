/**
 * Reconciles a PackageSync as soon as a ConfigMap or Secret its spec names changes (source credentials and CA,
 * verify keys, postBuild variables, Helm values, decryption keys, a remote kubeconfig: config-references.ts),
 * instead of at its next interval.
 *
 * One metadata-only watch per kind (PartialObjectMetadata: no data crosses the wire, so no Secret value ever
 * reaches this process through it), cluster-wide or in --watch-namespace, optionally narrowed by
 * --watch-configs-label-selector as Flux's flag does. The cache keeps only name, namespace and
 * resourceVersion of each object. A change is matched against an index of what each PackageSync references
 * (./config-references.ts), so an unrelated change costs a map lookup. Creating, changing and deleting a
 * referenced object all count (an optional source appearing or going away changes the variables).
 *
 * Without list/watch rights on a kind (a narrowed install), that watch does not start: one log line says so,
 * and changes are picked up at the interval as before.
 */
import type { Logger } from 'pino';
import type { KubeClient } from '../adapters/kube/client.ts';
import { Informer } from '../adapters/kube/informer.ts';
import type { PackageSync } from '../api/packagesync.ts';
import type { KubeObject } from '../core/object.ts';
import { configKey, ConfigReferences, referencesOf, type ConfigKind } from './config-references.ts';
import { canI } from '../adapters/kube/access-review.ts';

export interface ConfigWatchOptions {
  /** --watch-namespace: references are same-namespace, so only that namespace's objects matter. */
  namespace?: string;
  /** --watch-configs-label-selector */
  labelSelector?: string;
  /** Called with the `namespace/name` of every PackageSync that reads the changed object. */
  onChange: (psKey: string, changed: { kind: ConfigKind; namespace: string; name: string }) => void;
  log: Logger;
}

const KINDS: { kind: ConfigKind; resource: string }[] = [
  { kind: 'ConfigMap', resource: 'configmaps' },
  { kind: 'Secret', resource: 'secrets' },
];

/** The least an event needs: who it is and whether it changed. Labels, annotations (which can hold a
 *  kubectl last-applied copy of a Secret), owner references: all dropped before anything is kept. */
function keep(o: KubeObject): KubeObject {
  const { name, namespace, resourceVersion } = o.metadata;
  return { apiVersion: 'v1', kind: '', metadata: { name, namespace, resourceVersion } } as KubeObject;
}

export class ConfigWatch {
  readonly references = new ConfigReferences();
  private readonly informers: Informer[] = [];
  private readonly client: KubeClient;
  private readonly opts: ConfigWatchOptions;
  private stopped = false;

  constructor(client: KubeClient, opts: ConfigWatchOptions) {
    this.client = client;
    this.opts = opts;
  }

  /** Feed every PackageSync event here (add, update, delete), so the index follows the specs. */
  track(event: 'add' | 'update' | 'delete', ps: PackageSync): void {
    const key = `${ps.metadata.namespace}/${ps.metadata.name}`;
    if (event === 'delete') this.references.remove(key);
    else this.references.set(key, referencesOf(ps));
  }

  async start(): Promise<void> {
    for (const { kind, resource } of KINDS) {
      if (!(await this.allowed(resource))) {
        this.opts.log.info(
          { kind },
          `not watching ${kind}s: no list/watch permission; a change to a referenced ${kind} applies at the next interval`,
        );
        continue;
      }
      if (this.stopped) return;
      const ns = this.opts.namespace;
      const informer = new Informer(this.client, {
        path: ns ? `/api/v1/namespaces/${encodeURIComponent(ns)}/${resource}` : `/api/v1/${resource}`,
        labelSelector: this.opts.labelSelector,
        metadataOnly: { keep },
        onError: (e) =>
          this.opts.log.warn({ kind, err: e instanceof Error ? e.message : String(e) }, 'watch interrupted; resuming'),
      });
      let synced = false;
      void informer.synced.then(() => (synced = true));
      informer.on((event, obj) => {
        // the first list is what exists at start: every PackageSync is reconciled at start anyway
        if (event === 'add' && !synced) return;
        const { namespace = '', name } = obj.metadata;
        for (const psKey of this.references.readersOf(configKey(kind, namespace, name))) {
          this.opts.onChange(psKey, { kind, namespace, name });
        }
      });
      informer.start();
      this.informers.push(informer);
    }
  }

  stop(): void {
    this.stopped = true;
    for (const i of this.informers) i.stop();
  }

  private async allowed(resource: string): Promise<boolean> {
    const ask = (verb: string) => canI(this.client, { verb, resource, namespace: this.opts.namespace });
    const [list, watch] = await Promise.all([ask('list'), ask('watch')]);
    return list && watch;
  }
}
