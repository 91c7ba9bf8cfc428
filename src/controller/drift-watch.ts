/**
 * Self-heal on watch events (docs/drift.md): the objects in a PackageSync's inventory are watched through the
 * shared watches (adapters/kube/watch-cache.ts, the same ones the health wait uses), and a change someone else
 * made to one of them queues its PackageSync within seconds, instead of at the next interval. The reconcile
 * decides whether anything drifted (a no-op check writes nothing) and what to do (driftPolicy).
 *
 * Not a reason to look: a change of status only, and a change whose resourceVersion our own apply produced
 * (OwnWrites). An add (our own create, or a watch's first list) is one only when the copy differs outside status
 * from our newest write of it: an edit made after our apply but before a starting watch's first list arrives in
 * that list, as an add, and no update follows. Per PackageSync at most one check per `minIntervalMs`: a burst of
 * edits is one check now and one at the end of the interval.
 *
 * PackageSyncs that act as a ServiceAccount are watched too, as the controller (Argo CD's cluster cache does
 * the same): a watch is only a trigger, the reconcile it queues still reads and writes as the ServiceAccount,
 * and nothing read through these watches reaches the tenant. Where the controller's RBAC does not allow
 * watching a kind in a namespace, the API server refuses the watch and the cache remembers that instead of
 * retrying (watch-cache.ts): drift of that (kind, namespace) waits for the interval. An inventory change asks
 * again (rate-limited in core/plan/watch-refusal.ts). PackageSyncs applying into another cluster
 * (spec.kubeConfig) are left to the interval: their objects are not in the cluster these watches read.
 */
import type { Logger } from 'pino';
import type { PackageSync } from '../api/packagesync.ts';
import type { OwnWrites } from '../adapters/kube/own-writes.ts';
import type { WatchCache, WatchWant } from '../adapters/kube/watch-cache.ts';
import { refOfEntry } from '../core/inventory.ts';
import type { KubeObject } from '../core/object.ts';
import { changedOutsideStatus, ownerKeyOf } from '../core/plan/drift-event.ts';

export interface DriftWatchOptions {
  /** At most one check per PackageSync this often (--drift-check-min-interval). */
  minIntervalMs: number;
  log?: Logger;
  /** Called for each check queued (metrics, tests). */
  onCheck?: (key: string) => void;
}

export class DriftWatch {
  private readonly cache: WatchCache;
  private readonly ownWrites: OwnWrites;
  private readonly enqueue: (key: string) => void;
  private readonly opts: DriftWatchOptions;
  /** PackageSync key → the watches it holds and the revision its inventory is of, as a string to compare. */
  private readonly tracked = new Map<string, string>();
  private readonly last = new Map<string, number>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly unsubscribe: () => void;

  constructor(cache: WatchCache, ownWrites: OwnWrites, enqueue: (key: string) => void, opts: DriftWatchOptions) {
    this.cache = cache;
    this.ownWrites = ownWrites;
    this.enqueue = enqueue;
    this.opts = opts;
    this.unsubscribe = cache.subscribeObjects((event, obj, old) => this.onObject(event, obj, old));
  }

  /** Follows a PackageSync watch event: holds the watches its inventory needs, or releases them. */
  track(event: 'add' | 'update' | 'delete', ps: PackageSync): void {
    const key = `${ps.metadata.namespace}/${ps.metadata.name}`;
    const wants = event === 'delete' || !this.watched(ps) ? [] : wantsOf(ps);
    if (wants.length === 0) {
      if (this.tracked.has(key)) this.forget(key);
      return;
    }
    const id = `${JSON.stringify(wants)} ${ps.status?.lastAppliedRevision ?? ''}`;
    const before = this.tracked.get(key);
    if (before === id) return;
    this.tracked.set(key, id);
    // a new inventory may come with new RBAC for the controller: a refused watch among these is asked again
    const recheckRefused = before !== undefined;
    this.cache
      .hold(holderOf(key), wants, { recheckRefused })
      .catch((e: unknown) => this.opts.log?.warn({ err: String(e) }, 'drift watch'));
  }

  stop(): void {
    this.unsubscribe();
    for (const t of this.pending.values()) clearTimeout(t);
    for (const key of this.tracked.keys()) this.cache.release(holderOf(key));
    this.tracked.clear();
  }

  private watched(ps: PackageSync): boolean {
    const spec = ps.spec as { suspend?: boolean; kubeConfig?: unknown } | undefined;
    return !(spec?.suspend || ps.metadata.deletionTimestamp || spec?.kubeConfig);
  }

  private forget(key: string): void {
    this.tracked.delete(key);
    this.last.delete(key);
    clearTimeout(this.pending.get(key));
    this.pending.delete(key);
    this.cache.release(holderOf(key));
  }

  private onObject(event: 'add' | 'update' | 'delete', obj: KubeObject, old?: KubeObject): void {
    // our own prune: the package no longer has the object, nothing to correct
    if (event === 'delete' && this.ownWrites.deletedByUs(obj)) return;
    const key = ownerKeyOf(obj);
    if (!key || !this.tracked.has(key)) return;
    if (event === 'update' && !changedOutsideStatus(old, obj)) return;
    void this.ownWrites.settled(obj).then(() => {
      if (event === 'add' && !this.ownWrites.changedSinceOurs(obj)) return;
      if (event === 'update' && this.ownWrites.isOwn(obj)) return;
      this.opts.log?.debug({ packageSync: key, object: obj.metadata.name, event }, 'managed object changed: checking');
      this.check(key);
    });
  }

  /** Queues a check now, or at the end of the PackageSync's interval when one ran within it. */
  private check(key: string): void {
    if (this.pending.has(key)) return;
    const wait = (this.last.get(key) ?? -Infinity) + this.opts.minIntervalMs - Date.now();
    const run = () => {
      this.pending.delete(key);
      this.last.set(key, Date.now());
      this.opts.onCheck?.(key);
      this.enqueue(key);
    };
    if (wait <= 0) return run();
    const t = setTimeout(run, wait);
    t.unref?.();
    this.pending.set(key, t);
  }
}

const holderOf = (key: string) => `${key}#drift`;

/** One owned-objects watch per (kind, namespace) of the inventory. */
function wantsOf(ps: PackageSync): WatchWant[] {
  const seen = new Map<string, WatchWant>();
  for (const entry of ps.status?.inventory?.entries ?? []) {
    const r = refOfEntry(entry);
    if (!r.ok) continue;
    const { group, kind, namespace } = r.value;
    seen.set(`${group}/${kind}/${namespace}`, { group, kind, namespace, objects: 'owned' });
  }
  return [...seen.values()].sort((a, b) =>
    `${a.group}/${a.kind}/${a.namespace}`.localeCompare(`${b.group}/${b.kind}/${b.namespace}`),
  );
}
