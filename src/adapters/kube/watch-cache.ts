/**
 * Shared watches for the health wait: one list+watch (an Informer) per kind and scope, shared by every
 * PackageSync that needs it and reference-counted per holder, so a thousand PackageSyncs waiting on
 * Deployments cost one watch, not a thousand LISTs a second. A watch nobody holds any more stops (after a
 * short linger, so back-to-back waits do not re-list).
 *
 * Scopes, chosen per kind:
 * - objects a PackageSync applied: every object carrying the owner label, cluster-wide when the controller
 *   may list and watch the kind cluster-wide (asked once per kind with a SelfSubjectAccessReview), else
 *   one watch per namespace;
 * - children (Pods, ReplicaSets) that explain an unhealthy workload: one unfiltered watch per namespace,
 *   held only while some workload there is not Current.
 *
 * Every read is as the controller's own identity: a PackageSync that impersonates a ServiceAccount must
 * not see through the cache what its ServiceAccount may not read, so the engine does not use this for it.
 */
import type { Logger } from 'pino';
import { errorText } from '../../core/failure.ts';
import type { KubeObject } from '../../core/object.ts';
import { OwnerLabel } from '../../core/plan/ownership.ts';
import type { KubeClient } from './client.ts';
import { resourcePath, type Discovery, type ResourceMapping } from './discovery.ts';
import { canI } from './access-review.ts';
import { Informer, type InformerEvent } from './informer.ts';

/** What a holder needs watched: a kind in a namespace ('' = cluster-scoped kind), owned objects or all. */
export interface WatchWant {
  group: string;
  kind: string;
  namespace: string;
  /** 'owned' = objects with the owner label (a package's objects); 'all' = children, unfiltered. */
  objects: 'owned' | 'all';
}

/** The answer to a read: `synced` false = the watch has not delivered its first list yet, ask elsewhere. */
export type CacheRead = { synced: true; items: KubeObject[] } | { synced: false };

export interface WatchCacheOptions {
  /** How long a watch nobody holds stays open, in case someone needs it again soon. Default 30 s. */
  lingerMs?: number;
  log?: Logger;
}

interface Watch {
  key: string;
  informer: Informer;
  holders: Set<string>;
  synced: boolean;
  stopTimer?: NodeJS.Timeout;
}

type Listener = (watchKey: string) => void;
/** Every add, update and delete with the object (managedFields dropped) and, on update, the copy before. */
export type ObjectListener = (event: InformerEvent, obj: KubeObject, old?: KubeObject) => void;

const ACCESS_TTL_MS = 5 * 60_000;

export class WatchCache {
  private readonly client: KubeClient;
  private readonly discovery: Discovery;
  private readonly lingerMs: number;
  private readonly log: Logger | undefined;
  private readonly watches = new Map<string, Watch>();
  private readonly held = new Map<string, Set<string>>();
  private readonly listeners = new Set<Listener>();
  private readonly objectListeners = new Set<ObjectListener>();
  private readonly clusterWide = new Map<string, { allowed: Promise<boolean>; at: number }>();

  constructor(client: KubeClient, discovery: Discovery, opts: WatchCacheOptions = {}) {
    this.client = client;
    this.discovery = discovery;
    this.lingerMs = opts.lingerMs ?? 30_000;
    this.log = opts.log;
  }

  /**
   * Declares everything `holder` needs now (replacing what it held before) and returns the watch keys that
   * serve each want, in the order given (undefined for a kind the cluster does not serve).
   */
  async hold(holder: string, wants: readonly WatchWant[]): Promise<(string | undefined)[]> {
    const keys = await Promise.all(wants.map((w) => this.watchKey(w)));
    const next = new Set(keys.filter((k): k is string => k !== undefined));
    const before = this.held.get(holder) ?? new Set<string>();
    for (const spec of keys) if (spec && !before.has(spec)) this.acquire(spec, holder);
    for (const key of before) if (!next.has(key)) this.releaseOne(key, holder);
    if (next.size > 0) this.held.set(holder, next);
    else this.held.delete(holder);
    return keys;
  }

  /** Drops everything `holder` held (its wait ended, or its PackageSync is gone). */
  release(holder: string): void {
    for (const key of this.held.get(holder) ?? []) this.releaseOne(key, holder);
    this.held.delete(holder);
  }

  /** The cached objects of a watch, in one namespace ('' = all it holds). */
  read(watchKey: string, namespace: string): CacheRead {
    const w = this.watches.get(watchKey);
    if (!w?.synced) return { synced: false };
    return { synced: true, items: namespace ? w.informer.inNamespace(namespace) : [...w.informer.cache.values()] };
  }

  /**
   * The cached copies of these objects (those that exist), found by name: a health read costs what the
   * package holds, not what the whole watch holds (a cluster-wide watch of a fleet holds thousands).
   */
  lookup(watchKey: string, names: readonly { namespace: string; name: string }[]): CacheRead {
    const w = this.watches.get(watchKey);
    if (!w?.synced) return { synced: false };
    return { synced: true, items: names.flatMap((n) => w.informer.get(n.namespace, n.name) ?? []) };
  }

  /**
   * The copies an owned-objects watch that already runs holds of these objects (found by name), waiting up to
   * `waitMs` for its first list; undefined when no such watch runs (nothing is started here) or it has not
   * synced by then. For live reads (live-cache.ts), which must not cost a watch of their own.
   */
  async peekOwned(
    group: string,
    kind: string,
    namespace: string,
    names: readonly { namespace: string; name: string }[],
    waitMs: number,
  ): Promise<KubeObject[] | undefined> {
    const key = await this.watchKey({ group, kind, namespace, objects: 'owned' });
    if (!key || !this.watches.has(key)) return undefined;
    if (!this.watches.get(key)!.synced) await this.synced([key], waitMs);
    const w = this.watches.get(key);
    if (!w?.synced) return undefined;
    return names.flatMap((n) => w.informer.get(n.namespace, n.name) ?? []);
  }

  /** Resolves once each of these watches has delivered its first list, or after `timeoutMs`. */
  async synced(keys: readonly (string | undefined)[], timeoutMs: number): Promise<void> {
    const pending = keys.flatMap((k) => {
      const w = k ? this.watches.get(k) : undefined;
      return w && !w.synced ? [w.informer.synced] : [];
    });
    if (pending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)));
    await Promise.race([Promise.all(pending), timeout]);
    clearTimeout(timer);
  }

  /** Calls `listener` with the watch key of every add, update and delete; returns the unsubscribe. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` with every event's object (the drift watch); returns the unsubscribe. */
  subscribeObjects(listener: ObjectListener): () => void {
    this.objectListeners.add(listener);
    return () => this.objectListeners.delete(listener);
  }

  /** Watch keys running now, for tests and metrics. */
  active(): string[] {
    return [...this.watches.keys()].sort();
  }

  stop(): void {
    for (const w of this.watches.values()) {
      if (w.stopTimer) clearTimeout(w.stopTimer);
      w.informer.stop();
    }
    this.watches.clear();
    this.held.clear();
  }

  private async watchKey(want: WatchWant): Promise<string | undefined> {
    const m = await this.discovery.mapping(want.group, want.kind);
    if (!m) return undefined;
    const owned = want.objects === 'owned';
    let namespace = m.namespaced ? want.namespace : '';
    if (owned && m.namespaced && (await this.mayWatchClusterWide(m))) namespace = '';
    // group/version/resource names the collection; the selector marks owned-only watches
    return `${m.group}/${m.version}/${m.resource}|${m.kind}|${m.namespaced ? 'ns' : 'cluster'}|${namespace}|${owned ? 'owned' : 'all'}`;
  }

  private acquire(key: string, holder: string): void {
    let w = this.watches.get(key);
    if (!w) {
      w = this.start(key);
      this.watches.set(key, w);
    }
    if (w.stopTimer) {
      clearTimeout(w.stopTimer);
      w.stopTimer = undefined;
    }
    w.holders.add(holder);
  }

  private releaseOne(key: string, holder: string): void {
    const w = this.watches.get(key);
    if (!w) return;
    w.holders.delete(holder);
    if (w.holders.size > 0 || w.stopTimer) return;
    const stop = () => {
      if (w.holders.size > 0) return;
      w.informer.stop();
      this.watches.delete(key);
      this.log?.debug({ watch: key }, 'watch stopped: no PackageSync needs it');
    };
    if (this.lingerMs <= 0) return stop();
    w.stopTimer = setTimeout(stop, this.lingerMs);
    w.stopTimer.unref?.();
  }

  private start(key: string): Watch {
    const [gvr, kind, scope, namespace, objects] = key.split('|') as [string, string, string, string, string];
    const [group, version, resource] = gvr.split('/') as [string, string, string];
    const path = resourcePath({ group, version, resource, namespaced: scope === 'ns' }, namespace || undefined);
    const informer = new Informer(this.client, {
      path,
      labelSelector: objects === 'owned' ? OwnerLabel.name : undefined,
      objectType: { apiVersion: group ? `${group}/${version}` : version, kind },
      onError: (e) => this.log?.warn({ watch: key, err: errorText(e) }, 'watch interrupted; resuming'),
    });
    const w: Watch = { key, informer, holders: new Set(), synced: false };
    informer.on((event, obj, old) => {
      for (const l of this.listeners) l(key);
      for (const l of this.objectListeners) l(event, obj, old);
    });
    void informer.synced.then(() => {
      w.synced = true;
      for (const l of this.listeners) l(key);
    });
    informer.start();
    this.log?.debug({ watch: key }, 'watch started');
    return w;
  }

  /** Whether one cluster-wide watch can replace one per namespace: asked once per kind, cached a while. */
  private mayWatchClusterWide(m: ResourceMapping): Promise<boolean> {
    const id = `${m.group}/${m.resource}`;
    const known = this.clusterWide.get(id);
    if (known && Date.now() - known.at < ACCESS_TTL_MS) return known.allowed;
    // no answer counts as no: per-namespace watches work either way
    const allowed = Promise.all(
      ['list', 'watch'].map((verb) => canI(this.client, { verb, group: m.group, resource: m.resource })),
    ).then((a) => a.every(Boolean));
    this.clusterWide.set(id, { allowed, at: Date.now() });
    return allowed;
  }
}
