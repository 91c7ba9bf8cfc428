/**
 * PackageSyncs as the reconcile reads them: from the manager's watch when its copy is known to be current, with
 * a GET otherwise (issue 18: one request less per reconcile; none for the load step of a restart's 10,000).
 *
 * Known to be current: the watch holds the resourceVersion our own last write of this PackageSync returned
 * (status, finalizer), or we have written nothing to it since this process started (then the watch's copy is
 * the one whose event queued the key). A copy that differs from our last write is lagging behind it or newer
 * than it, and a resourceVersion is opaque, so a GET decides; when the GET agrees with the watch, the watch is
 * trusted again (the rule is OwnWrites.trustsCopy's, which the owned-objects cache follows too: live-cache.ts).
 * A stale read could not do harm either way: every status write carries the resourceVersion it
 * was read at, and a conflict re-reads with a GET and keeps the union of both inventories (ADR 0008).
 */
import type { PackageSync, Status } from '../api/packagesync.ts';
import type { KubeClient } from '../adapters/kube/client.ts';
import { OwnWrites } from '../adapters/kube/own-writes.ts';
import { PackageSyncs } from '../adapters/kube/packagesyncs.ts';
import type { ShardOptions } from '../core/inventory-shards.ts';
import type { KubeObject } from '../core/object.ts';

/** Our last write's resourceVersions remembered at most (the oldest forgotten: then the watch is trusted). */
const WRITTEN_MAX = 100_000;

export class WatchedPackageSyncs extends PackageSyncs {
  private watch: ReadonlyMap<string, KubeObject> | undefined;
  /** The resourceVersion our last write of each PackageSync (by uid) returned. */
  private readonly written = new OwnWrites(WRITTEN_MAX, { shapes: false });
  /** Reads answered by the watch / by a GET, for tests and the bench. */
  readonly reads = { watch: 0, get: 0 };

  constructor(client: KubeClient, component?: string, shards?: ShardOptions) {
    super(client, component, shards);
  }

  /** The manager's informer cache (keys `namespace/name`): from now on, reads may come from it. */
  readFrom(watch: ReadonlyMap<string, KubeObject>): void {
    this.watch = watch;
  }

  /** As stored (`get` reads a spilled inventory's shards on top, cached: ADR 0027). */
  override async getStored(namespace: string, name: string): Promise<PackageSync | undefined> {
    const key = `${namespace}/${name}`;
    const cached = this.watch?.get(key);
    if (cached && this.written.trustsCopy(cached.metadata.uid, cached.metadata.resourceVersion)) {
      this.reads.watch++;
      // the informer's object is shared with every other reader: the reconcile gets its own
      return structuredClone(cached) as unknown as PackageSync;
    }
    this.reads.get++;
    const fresh = await this.read(namespace, name);
    if (fresh && cached && fresh.metadata.resourceVersion === cached.metadata.resourceVersion)
      this.written.confirmed(cached.metadata.uid!);
    return fresh;
  }

  override peekStored(namespace: string, name: string): Readonly<PackageSync> | undefined {
    const cached = this.watch?.get(`${namespace}/${name}`);
    if (!cached || !this.written.trustsCopy(cached.metadata.uid, cached.metadata.resourceVersion)) return undefined;
    return cached as unknown as PackageSync;
  }

  override async writeStatus(ps: PackageSync, status: Status): Promise<PackageSync | undefined> {
    return this.rememberWrite(await super.writeStatus(ps, status));
  }

  override async setFinalizer(ps: PackageSync, finalizer: string, present: boolean): Promise<PackageSync | undefined> {
    const before = ps.metadata.resourceVersion;
    const after = await super.setFinalizer(ps, finalizer, present);
    // no write (the finalizer was already as asked): nothing new to wait for
    return after?.metadata.resourceVersion === before ? after : this.rememberWrite(after);
  }

  /** The PackageSync was deleted (its watch's delete event): what we wrote to it is of no use any more. */
  forget(ps: KubeObject): void {
    this.written.deleted(ps);
  }

  /** PackageSyncs whose last write is remembered now (tests). */
  get remembered(): number {
    return this.written.size;
  }

  private rememberWrite(ps: PackageSync | undefined): PackageSync | undefined {
    if (ps) this.written.record(ps as unknown as KubeObject);
    return ps;
  }
}
