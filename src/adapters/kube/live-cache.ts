/**
 * Live reads from the controller's shared watches (issue 18): a settled unit's periodic check, and every unit's
 * check after a restart, read their objects from the owned-objects watches the drift watch and the health wait
 * already hold, instead of a labelled LIST per kind. Only copies we may trust are returned:
 * - the watch runs and has synced (waiting a little for its first list: at a restart, one LIST of each kind for
 *   the whole fleet beats one per unit);
 * - the copy carries the resourceVersion our own newest apply of it produced, or we remember none, or the watch
 *   has already delivered that write (then the copy is newer: a controller's status on top of it). A copy that
 *   differs before the watch delivered our write is read from the API server instead: lagging behind our apply
 *   or newer than it, an opaque resourceVersion cannot say.
 * What the cache does not hold is not taken as absent: live.ts asks the API server for it (an object without
 * our label, one created a moment ago). Reads are the controller's own: objects.ts hands this only to a
 * PackageSync that acts as the controller in the controller's cluster.
 */
import type { KubeObject, ObjectRef } from '../../core/object.ts';
import { refKey } from '../../core/object.ts';
import type { ResourceMapping } from './discovery.ts';
import type { OwnWrites } from './own-writes.ts';
import type { WatchCache } from './watch-cache.ts';

export interface LiveCache {
  /** refKey → the trusted cached copy, for those of `refs` (one kind, one scope) the cache can answer for. */
  lookup(m: ResourceMapping, namespace: string, refs: readonly ObjectRef[]): Promise<Map<string, KubeObject>>;
  /**
   * refKeys of those of `refs` that no PackageSync owns, as far as a synced owned-objects watch that already runs
   * can tell (the watch does not hold them at all); undefined when no such watch runs. Nothing is started for it:
   * a watch per kind and namespace would cost more than the reads it saves. The watch may lag a moment behind
   * the API server, so an object absent here is only applied create-only (docs/adr/0029).
   */
  unowned(m: ResourceMapping, namespace: string, refs: readonly ObjectRef[]): Promise<Set<string> | undefined>;
  /**
   * refKey → the watch's copy as it is, trusted or not, for those of `refs` a running, synced watch holds; no
   * waiting for a watch to sync. For comparing with a copy already judged (engine/settled-checkpoints.ts): a copy
   * with the same uid and resourceVersion is that same state, however far the watch lags.
   */
  peek(m: ResourceMapping, namespace: string, refs: readonly ObjectRef[]): Promise<Map<string, KubeObject>>;
  /**
   * Where a running, synced watch holds these objects (one kind, one scope), in the order given, for `held` to
   * read their copies again later without discovery or lookups; undefined when no such watch holds them all now.
   */
  places(m: ResourceMapping, namespace: string, refs: readonly ObjectRef[]): Promise<WatchedPlace[] | undefined>;
  /** The watch's copy at a place `places` gave, as it is now; undefined when that watch no longer runs synced. */
  held(place: WatchedPlace): KubeObject | undefined;
}

/** Where one object's copy is held: the watch's key, the object's namespace ('' = cluster-scoped) and name. */
export interface WatchedPlace {
  readonly watch: string;
  readonly namespace: string;
  readonly name: string;
}

export interface LiveCacheStats {
  /** Objects answered from a watch, and objects left to the API server. */
  hits: number;
  misses: number;
}

export class WatchedLive implements LiveCache {
  readonly stats: LiveCacheStats = { hits: 0, misses: 0 };
  private readonly watches: WatchCache;
  private readonly ownWrites: OwnWrites;
  private readonly syncWaitMs: number;

  constructor(watches: WatchCache, ownWrites: OwnWrites, syncWaitMs = 10_000) {
    this.watches = watches;
    this.ownWrites = ownWrites;
    this.syncWaitMs = syncWaitMs;
    // the drift watch does the same wait: an event can overtake the response of the apply that caused it
    watches.subscribeObjects((event, obj) =>
      event === 'delete' ? ownWrites.deleted(obj) : void ownWrites.settled(obj).then(() => ownWrites.watched(obj)),
    );
  }

  async lookup(m: ResourceMapping, namespace: string, refs: readonly ObjectRef[]): Promise<Map<string, KubeObject>> {
    const found = new Map<string, KubeObject>();
    for (const [key, o] of await this.copies(m, namespace, refs, this.syncWaitMs)) {
      if (!this.ownWrites.trustsCopy(o.metadata.uid, o.metadata.resourceVersion)) continue;
      found.set(key, o);
    }
    this.stats.hits += found.size;
    this.stats.misses += refs.length - found.size;
    return found;
  }

  async unowned(m: ResourceMapping, namespace: string, refs: readonly ObjectRef[]): Promise<Set<string> | undefined> {
    const names = refs.map((r) => ({ namespace: m.namespaced ? r.namespace : '', name: r.name }));
    const copies = await this.watches.peekOwned(m.group, m.kind, namespace, names, this.syncWaitMs);
    if (!copies) return undefined;
    const held = new Set(copies.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`));
    const out = new Set<string>();
    for (const r of refs) if (!held.has(`${m.namespaced ? r.namespace : ''}/${r.name}`)) out.add(refKey(r));
    return out;
  }

  peek(m: ResourceMapping, namespace: string, refs: readonly ObjectRef[]): Promise<Map<string, KubeObject>> {
    return this.copies(m, namespace, refs, 0);
  }

  async places(m: ResourceMapping, namespace: string, refs: readonly ObjectRef[]): Promise<WatchedPlace[] | undefined> {
    const watch = await this.watches.ownedWatch(m.group, m.kind, namespace);
    if (watch === undefined) return undefined;
    const places = refs.map((r) => ({ watch, namespace: m.namespaced ? r.namespace : '', name: r.name }));
    return places.every((p) => this.held(p) !== undefined) ? places : undefined;
  }

  held(place: WatchedPlace): KubeObject | undefined {
    return this.watches.heldCopy(place.watch, place.namespace, place.name);
  }

  private async copies(
    m: ResourceMapping,
    namespace: string,
    refs: readonly ObjectRef[],
    syncWaitMs: number,
  ): Promise<Map<string, KubeObject>> {
    const names = refs.map((r) => ({ namespace: m.namespaced ? r.namespace : '', name: r.name }));
    const copies = await this.watches.peekOwned(m.group, m.kind, namespace, names, syncWaitMs);
    const found = new Map<string, KubeObject>();
    for (const o of copies ?? [])
      found.set(
        refKey({ group: m.group, kind: m.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name }),
        o,
      );
    return found;
  }
}
