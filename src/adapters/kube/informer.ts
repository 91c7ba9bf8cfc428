/**
 * List-then-watch with a local cache, the way client-go's informers work: one LIST, then a WATCH from
 * its resourceVersion with bookmarks. A 410 Gone relists once; a watch that ends (server timeout, dead
 * connection) resumes from the last resourceVersion seen, so reconnects do not re-list.
 *
 * Cached objects lose metadata.managedFields on arrival (controller-runtime's TransformStripManagedFields):
 * nothing reads them from a cache, and they are often half of a small object's JSON, so a fleet's idle
 * memory would otherwise hold them for every PackageSync and every watched object.
 */
import { errorText } from '../../core/failure.ts';
import type { KubeObject } from '../../core/object.ts';
import { isRefusal } from '../../core/plan/watch-refusal.ts';
import { KubeApiError, type KubeClient } from './client.ts';

export type InformerEvent = 'add' | 'update' | 'delete';
export type Handler = (event: InformerEvent, obj: KubeObject, old?: KubeObject) => void;

export interface InformerOptions {
  /** Collection path, e.g. /apis/packagesync.io/v1alpha1/packagesyncs */
  path: string;
  labelSelector?: string;
  /** Called with errors that the informer retries itself (for logs). */
  onError?: (e: unknown) => void;
  /**
   * Set: a list or watch the API server refuses (403) stops the informer and is reported here once, instead
   * of being retried with back-off forever (core/plan/watch-refusal.ts). Unset: retried like any error.
   */
  onRefused?: (e: KubeApiError) => void;
  /** Server-side watch timeout; a silent dead watch is noticed at the latest after this plus the margin. */
  watchTimeoutSeconds?: number;
  /** How long past its server-side timeout a watch may stay open before it counts as dead. Default 30 s. */
  deadmanMarginMs?: number;
  /**
   * apiVersion and kind to stamp on listed items: a LIST names them once for the list, not on each item,
   * and readers of the cache (the health rules) need them on every object.
   */
  objectType?: { apiVersion: string; kind: string };
  /**
   * Ask for PartialObjectMetadata only: no data, spec or status crosses the wire (a Secret's values never
   * reach this process). `keep` then trims each object further before it is cached or handed out.
   */
  metadataOnly?: { keep: (o: KubeObject) => KubeObject };
}

/** Accept header of a LIST that returns metadata only (PartialObjectMetadataList). */
export const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const METADATA_WATCH = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** Drops metadata.managedFields in place (the object is the informer's own copy, parsed from the wire). */
function slim(o: KubeObject): KubeObject {
  if (o.metadata && 'managedFields' in o.metadata) delete (o.metadata as { managedFields?: unknown }).managedFields;
  return o;
}

export class Informer {
  /** `<namespace>/<name>` → object ('' namespace for cluster-scoped). Read it; only the informer writes it. */
  readonly cache = new Map<string, KubeObject>();
  /** The same objects by namespace, so a namespace or a name is found without scanning the whole cache. */
  private readonly byNamespace = new Map<string, Map<string, KubeObject>>();
  /**
   * `<namespace>/<owner name>` → the objects whose ownerReferences name it: a workload's ReplicaSets and Pods are
   * found without scanning a namespace that holds a fleet's thousands (the health wait's explanation).
   */
  private readonly byOwner = new Map<string, Map<string, KubeObject>>();
  private readonly handlers: Handler[] = [];
  private readonly abort = new AbortController();
  private resourceVersion = '';
  private syncedResolve!: () => void;
  /** Resolves after the first LIST has been delivered. */
  readonly synced = new Promise<void>((r) => (this.syncedResolve = r));
  private readonly client: KubeClient;
  private readonly opts: InformerOptions;

  constructor(client: KubeClient, opts: InformerOptions) {
    this.client = client;
    this.opts = opts;
  }

  /** The cached object, or undefined. */
  get(namespace: string, name: string): KubeObject | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  /** The cached objects of one namespace whose ownerReferences name `owner` (any kind: the caller checks). */
  ownedBy(namespace: string, owner: string): KubeObject[] {
    return [...(this.byOwner.get(`${namespace}/${owner}`)?.values() ?? [])];
  }

  /** The cached objects of one namespace. */
  inNamespace(namespace: string): KubeObject[] {
    return [...(this.byNamespace.get(namespace)?.values() ?? [])];
  }

  private put(obj: KubeObject): void {
    const ns = obj.metadata.namespace ?? '';
    const before = this.cache.get(keyOf(obj));
    if (before) this.indexOwners(before, false);
    this.indexOwners(obj, true);
    this.cache.set(keyOf(obj), obj);
    let names = this.byNamespace.get(ns);
    if (!names) this.byNamespace.set(ns, (names = new Map()));
    names.set(obj.metadata.name, obj);
  }

  private indexOwners(obj: KubeObject, add: boolean): void {
    const ns = obj.metadata.namespace ?? '';
    for (const ref of obj.metadata.ownerReferences ?? []) {
      const k = `${ns}/${ref.name}`;
      let owned = this.byOwner.get(k);
      if (add) {
        if (!owned) this.byOwner.set(k, (owned = new Map()));
        owned.set(obj.metadata.name, obj);
      } else {
        owned?.delete(obj.metadata.name);
        if (owned?.size === 0) this.byOwner.delete(k);
      }
    }
  }

  private remove(obj: KubeObject): void {
    const ns = obj.metadata.namespace ?? '';
    const cached = this.cache.get(keyOf(obj));
    if (cached) this.indexOwners(cached, false);
    this.cache.delete(keyOf(obj));
    const names = this.byNamespace.get(ns);
    names?.delete(obj.metadata.name);
    if (names?.size === 0) this.byNamespace.delete(ns);
  }

  on(handler: Handler): void {
    this.handlers.push(handler);
  }

  start(): void {
    void this.run();
  }

  stop(): void {
    this.abort.abort();
  }

  /**
   * Each handler on its own: one that throws for one object (a PackageSync whose spec it did not expect) must not
   * stop the others, nor the watch, which would replay the same event and throw again (ADR 0032).
   */
  private emit(event: InformerEvent, obj: KubeObject, old?: KubeObject): void {
    for (const h of this.handlers) {
      try {
        h(event, obj, old);
      } catch (e) {
        this.opts.onError?.(new Error(`a handler failed on ${event} ${keyOf(obj)}: ${errorText(e)}`));
      }
    }
  }

  private async run(): Promise<void> {
    let backoff = 250;
    while (!this.abort.signal.aborted) {
      let relisted = false;
      try {
        if (!this.resourceVersion) {
          await this.list();
          relisted = true;
        }
        this.syncedResolve();
        await this.watch();
        backoff = 250;
      } catch (e) {
        if (this.abort.signal.aborted) return;
        // Expired: relist once, then watch again. A 410 right after a fresh list (a lagging watch cache)
        // waits out the back-off first, so it can never turn into a tight list loop.
        const expired = e instanceof KubeApiError && e.status === 410;
        if (expired) this.resourceVersion = '';
        if (expired && !relisted) continue;
        if (this.opts.onRefused && e instanceof KubeApiError && isRefusal(e.status)) {
          this.abort.abort();
          this.opts.onRefused(e);
          return;
        }
        this.opts.onError?.(e);
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
  }

  private async list(): Promise<void> {
    const seen = new Map<string, KubeObject>();
    let cont: string | undefined;
    let rv: string;
    do {
      const page = await this.client.request<{
        items: KubeObject[] | null;
        metadata: { continue?: string; resourceVersion: string };
      }>('GET', this.opts.path, {
        query: { labelSelector: this.opts.labelSelector, limit: 500, continue: cont },
        signal: this.abort.signal,
        accept: this.opts.metadataOnly ? METADATA_LIST : undefined,
      });
      const type = this.opts.objectType;
      // an empty PartialObjectMetadataList comes as `"items": null` (Go's nil slice), not []
      for (const item of page.items ?? []) seen.set(keyOf(item), this.trim(type ? { ...item, ...type } : item));
      cont = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion;
    } while (cont);
    for (const [k, old] of this.cache) {
      if (!seen.has(k)) {
        this.remove(old);
        this.emit('delete', old);
      }
    }
    for (const [k, obj] of seen) {
      const old = this.cache.get(k);
      this.put(obj);
      if (!old) this.emit('add', obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit('update', obj, old);
    }
    this.resourceVersion = rv;
  }

  private async watch(): Promise<void> {
    const timeoutSeconds = this.opts.watchTimeoutSeconds ?? 240 + Math.floor(Math.random() * 120);
    const res = await this.client.stream(this.opts.path, {
      query: {
        watch: 1,
        allowWatchBookmarks: true,
        resourceVersion: this.resourceVersion,
        labelSelector: this.opts.labelSelector,
        timeoutSeconds,
      },
      signal: this.abort.signal,
      accept: this.opts.metadataOnly ? METADATA_WATCH : undefined,
    });
    // A connection can die without a FIN; the server closes the watch after timeoutSeconds, so a watch
    // that outlives that by a margin is dead: abort it and resume.
    const deadman = setTimeout(
      () => res.body.destroy(new Error('watch went silent')),
      timeoutSeconds * 1000 + (this.opts.deadmanMarginMs ?? 30_000),
    );
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += (chunk as Buffer).toString('utf8');
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line.trim()) this.handle(JSON.parse(line) as { type: string; object: KubeObject });
        }
      }
    } finally {
      clearTimeout(deadman);
    }
  }

  /** What the cache keeps of an object: metadata.managedFields dropped, or `metadataOnly.keep`'s choice. */
  private trim(o: KubeObject): KubeObject {
    return this.opts.metadataOnly ? this.opts.metadataOnly.keep(o) : slim(o);
  }

  private handle(ev: { type: string; object: KubeObject }): void {
    if (ev.type === 'ERROR') {
      const status = ev.object as unknown as { code?: number; message?: string };
      throw new KubeApiError(status.code ?? 500, 'WatchError', status.message ?? 'watch error');
    }
    if (ev.object.metadata?.resourceVersion) this.resourceVersion = ev.object.metadata.resourceVersion;
    if (ev.type === 'BOOKMARK') return;
    const obj = this.trim(ev.object);
    const k = keyOf(obj);
    const old = this.cache.get(k);
    if (ev.type === 'DELETED') {
      this.remove(obj);
      this.emit('delete', obj);
    } else {
      this.put(obj);
      this.emit(old ? 'update' : 'add', obj, old);
    }
  }
}
