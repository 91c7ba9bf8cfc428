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
 * not see through the cache what its ServiceAccount may not read, so the engine does not use this for it
 * (the drift watch does: for it a watch is only a trigger, the reconcile reads as the ServiceAccount).
 *
 * A watch the API server refuses (403: the controller may not list or watch that kind there) stops, is
 * logged once and remembered, and is tried again only rarely (core/plan/watch-refusal.ts); meanwhile reads
 * of it answer `synced: false`, so the health wait reads directly and drift waits for the interval.
 */
import type { Logger } from 'pino';
import { errorText } from '../../core/failure.ts';
import type { KubeObject } from '../../core/object.ts';
import { OwnerLabel } from '../../core/plan/ownership.ts';
import { onRetryTimer, REFUSAL_TIMES, refusalStands, type RefusalTimes } from '../../core/plan/watch-refusal.ts';
import type { KubeApiError, KubeClient } from './client.ts';
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
  /** How long a refused watch stays refused (tests shorten it). */
  refusalTimes?: RefusalTimes;
}

interface Watch {
  key: string;
  /** Undefined while the watch is refused. */
  informer?: Informer;
  holders: Set<string>;
  synced: boolean;
  stopTimer?: NodeJS.Timeout;
  retryTimer?: NodeJS.Timeout;
  /** Resolves when the current informer has delivered its first list, or was refused. */
  settled: Promise<void>;
  settle: () => void;
}

/**
 * Every add, update and delete of a watch with its object (and, on update, the copy before), so a listener
 * can tell whose event it is; `obj` undefined = an event of the watch itself (its first list arrived, it was
 * refused), which concerns every holder of the key.
 */
export type Listener = (watchKey: string, obj?: KubeObject, old?: KubeObject) => void;
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
  /** Watch key → when the API server last refused it; outlives the watch, so a re-hold does not re-ask. */
  private readonly refusals = new Map<string, number>();
  /** Refusals already logged as a warning: one per (kind, namespace), not one per retry. */
  private readonly warned = new Set<string>();
  private readonly refusalTimes: RefusalTimes;
  private stopped = false;

  constructor(client: KubeClient, discovery: Discovery, opts: WatchCacheOptions = {}) {
    this.client = client;
    this.discovery = discovery;
    this.lingerMs = opts.lingerMs ?? 30_000;
    this.log = opts.log;
    this.refusalTimes = opts.refusalTimes ?? REFUSAL_TIMES;
  }

  /**
   * Declares everything `holder` needs now (replacing what it held before) and returns the watch keys that
   * serve each want, in the order given (undefined for a kind the cluster does not serve).
   * `recheckRefused`: the holder's inventory changed, so a refused watch among these may be asked again sooner.
   */
  async hold(
    holder: string,
    wants: readonly WatchWant[],
    opts: { recheckRefused?: boolean } = {},
  ): Promise<(string | undefined)[]> {
    // a stopped cache starts nothing: its client may be closed (a remote cluster's Secret changed, shutdown), and a
    // wait still holding it reads directly (undefined keys) until it ends
    if (this.stopped) return wants.map(() => undefined);
    const keys = await Promise.all(wants.map((w) => this.watchKey(w)));
    if (this.stopped) return wants.map(() => undefined);
    const next = new Set(keys.filter((k): k is string => k !== undefined));
    const before = this.held.get(holder) ?? new Set<string>();
    for (const spec of keys) if (spec && !before.has(spec)) this.acquire(spec, holder);
    for (const key of before) if (!next.has(key)) this.releaseOne(key, holder);
    if (opts.recheckRefused) for (const key of next) this.retryRefused(key, true);
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
    if (!w?.synced || !w.informer) return { synced: false };
    return { synced: true, items: namespace ? w.informer.inNamespace(namespace) : [...w.informer.cache.values()] };
  }

  /** The cached objects of one namespace whose ownerReferences name one of `owners` (an index, not a scan). */
  readOwnedBy(watchKey: string, namespace: string, owners: readonly string[]): CacheRead {
    const informer = this.watches.get(watchKey)?.synced ? this.watches.get(watchKey)?.informer : undefined;
    if (!informer) return { synced: false };
    const found = new Map<string, KubeObject>();
    for (const owner of owners) for (const o of informer.ownedBy(namespace, owner)) found.set(o.metadata.name, o);
    return { synced: true, items: [...found.values()] };
  }

  /**
   * The cached copies of these objects (those that exist), found by name: a health read costs what the
   * package holds, not what the whole watch holds (a cluster-wide watch of a fleet holds thousands).
   */
  lookup(watchKey: string, names: readonly { namespace: string; name: string }[]): CacheRead {
    const informer = this.watches.get(watchKey)?.synced ? this.watches.get(watchKey)?.informer : undefined;
    if (!informer) return { synced: false };
    return { synced: true, items: names.flatMap((n) => informer.get(n.namespace, n.name) ?? []) };
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
    const informer = this.watches.get(key)?.synced ? this.watches.get(key)?.informer : undefined;
    if (!informer) return undefined; // not synced, or refused (403): the API server is asked instead
    return names.flatMap((n) => informer.get(n.namespace, n.name) ?? []);
  }

  /**
   * The key of the owned-objects watch that holds group/kind in `namespace`, when it already runs and has synced
   * (nothing is started here): for a check that reads the same copies again and again (`heldCopy`) without asking
   * discovery each time.
   */
  async ownedWatch(group: string, kind: string, namespace: string): Promise<string | undefined> {
    const key = await this.watchKey({ group, kind, namespace, objects: 'owned' });
    return key !== undefined && this.watches.get(key)?.synced && this.watches.get(key)?.informer ? key : undefined;
  }

  /** The copy watch `watchKey` holds of this object now; undefined when that watch does not run synced. */
  heldCopy(watchKey: string, namespace: string, name: string): KubeObject | undefined {
    const w = this.watches.get(watchKey);
    return w?.synced ? w.informer?.get(namespace, name) : undefined;
  }

  /** Resolves once each of these watches has delivered its first list, or after `timeoutMs`. */
  async synced(keys: readonly (string | undefined)[], timeoutMs: number): Promise<void> {
    const pending = keys.flatMap((k) => {
      const w = k ? this.watches.get(k) : undefined;
      return w?.informer && !w.synced ? [w.settled] : [];
    });
    if (pending.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)));
    await Promise.race([Promise.all(pending), timeout]);
    clearTimeout(timer);
  }

  /**
   * Calls `listener` with the watch key and object of every add, update and delete (a relist's differences
   * included), and with the key alone when the watch syncs or is refused; returns the unsubscribe.
   */
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

  /** Watch keys held but refused by the API server now, for tests and metrics. */
  refused(): string[] {
    return [...this.watches.values()].filter((w) => !w.informer).map((w) => w.key);
  }

  /** Stops every watch for good: later holds start none (see hold). */
  stop(): void {
    this.stopped = true;
    for (const w of this.watches.values()) {
      clearTimeout(w.stopTimer);
      clearTimeout(w.retryTimer);
      w.informer?.stop();
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
      w = { key, holders: new Set(), synced: false, settled: Promise.resolve(), settle: () => undefined };
      this.watches.set(key, w);
      if (refusalStands(this.refusals.get(key), Date.now(), false, this.refusalTimes)) this.scheduleRetry(w);
      else this.start(w);
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
      clearTimeout(w.retryTimer);
      w.informer?.stop();
      this.watches.delete(key);
      this.log?.debug({ watch: key }, 'watch stopped: no PackageSync needs it');
    };
    if (this.lingerMs <= 0) return stop();
    w.stopTimer = setTimeout(stop, this.lingerMs);
    w.stopTimer.unref?.();
  }

  /** Starts (or restarts, after a refusal) the informer of a watch. */
  private start(w: Watch): void {
    const key = w.key;
    const [gvr, kind, scope, namespace, objects] = key.split('|') as [string, string, string, string, string];
    const [group, version, resource] = gvr.split('/') as [string, string, string];
    const path = resourcePath({ group, version, resource, namespaced: scope === 'ns' }, namespace || undefined);
    const informer = new Informer(this.client, {
      path,
      labelSelector: objects === 'owned' ? OwnerLabel.name : undefined,
      objectType: { apiVersion: group ? `${group}/${version}` : version, kind },
      onError: (e) => this.log?.warn({ watch: key, err: errorText(e) }, 'watch interrupted; resuming'),
      onRefused: (e) => this.refuse(w, informer, e),
    });
    w.informer = informer;
    w.settled = new Promise((r) => (w.settle = r));
    informer.on((event, obj, old) => {
      for (const l of this.listeners) l(key, obj, old);
      for (const l of this.objectListeners) l(event, obj, old);
    });
    void informer.synced.then(() => {
      if (w.informer !== informer) return;
      w.synced = true;
      w.settle();
      if (this.refusals.delete(key)) this.log?.info({ watch: key }, 'watch allowed now');
      this.warned.delete(key);
      for (const l of this.listeners) l(key);
    });
    informer.start();
    this.log?.debug({ watch: key }, 'watch started');
  }

  /** The API server refused the watch: stop asking until the refusal lapses (watch-refusal.ts). */
  private refuse(w: Watch, informer: Informer, e: KubeApiError): void {
    if (w.informer !== informer) return;
    w.informer = undefined;
    w.synced = false;
    w.settle();
    this.refusals.set(w.key, Date.now());
    const [, kind, , namespace] = w.key.split('|');
    const fields = { watch: w.key, kind, namespace: namespace || undefined, err: errorText(e) };
    const msg = 'not allowed to watch this kind here: its drift waits for the interval, health reads it directly';
    if (this.warned.has(w.key)) this.log?.debug(fields, msg);
    else this.log?.warn(fields, msg);
    this.warned.add(w.key);
    if (this.watches.get(w.key) === w) this.scheduleRetry(w);
    for (const l of this.listeners) l(w.key);
  }

  /** Tries a refused watch again once its refusal lapses, if someone still holds it then. */
  private scheduleRetry(w: Watch): void {
    clearTimeout(w.retryTimer);
    const at = this.refusals.get(w.key) ?? Date.now();
    const wait = Math.max(0, at + this.refusalTimes.retryMs - Date.now());
    w.retryTimer = setTimeout(() => this.onRetryTimer(w.key), wait);
    w.retryTimer.unref?.();
  }

  private onRetryTimer(key: string): void {
    const w = this.watches.get(key);
    if (!w || w.informer || w.holders.size === 0) return;
    const next = onRetryTimer(this.refusals.get(key), Date.now(), this.refusalTimes);
    if (next.ask) return this.retryRefused(key, false);
    w.retryTimer = setTimeout(() => this.onRetryTimer(key), next.inMs);
    w.retryTimer.unref?.();
  }

  private retryRefused(key: string, recheck: boolean): void {
    const w = this.watches.get(key);
    if (!w || w.informer || w.holders.size === 0) return;
    if (refusalStands(this.refusals.get(key), Date.now(), recheck, this.refusalTimes)) return;
    clearTimeout(w.retryTimer);
    w.retryTimer = undefined;
    this.start(w);
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
