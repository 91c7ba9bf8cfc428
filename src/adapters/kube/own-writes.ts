/**
 * The resourceVersions our own applies produced, per object uid (the newest only, bounded): a watch event
 * carrying one of them is our write coming back, not someone changing the object (controller/drift-watch.ts).
 *
 * The watch and the apply's response travel on different connections, so the event of our write can arrive
 * before the response that says which resourceVersion it was: while an apply of an object is in flight,
 * `settled` holds its events back until the response is in.
 */
import type { KubeObject } from '../../core/object.ts';
import { appliedShape, differsFromApplied, type AppliedShape } from '../../core/plan/drift-event.ts';

const OWN_DELETES_MAX = 10_000;

export class OwnWrites {
  private readonly byUid = new Map<string, string>();
  /** Per uid in byUid, what our newest write looked like outside status (see changedSinceOurs). */
  private readonly shapes = new Map<string, AppliedShape>();
  /** uids whose watch has delivered our newest write: any copy it shows since is that write or newer. */
  private readonly seenByWatch = new Set<string>();
  private readonly inFlight = new Map<string, { count: number; done: Promise<void>; resolve: () => void }>();
  private readonly max: number;
  /**
   * uids we are deleting or have deleted (prune), until the drift watch sees their delete event; oldest first,
   * at most OWN_DELETES_MAX (an event nobody consumes — no drift watch — must not keep them forever).
   */
  private readonly ownDeletes = new Set<string>();

  /** Whether writes are kept as shapes too (changedSinceOurs): the drift watch's objects, not PackageSyncs. */
  private readonly keepShapes: boolean;

  constructor(max = 50_000, opts: { shapes?: boolean } = {}) {
    this.max = max;
    this.keepShapes = opts.shapes ?? true;
  }

  /** We delete the object with this uid (prune): its delete event is our own doing, not drift. */
  deleting(uid: string): void {
    this.ownDeletes.add(uid);
    if (this.ownDeletes.size > OWN_DELETES_MAX) this.ownDeletes.delete(this.ownDeletes.values().next().value!);
  }

  /** The delete did not happen after all (the request failed): a delete event of that uid is someone else's. */
  notDeleting(uid: string): void {
    this.ownDeletes.delete(uid);
  }

  /** Whether a delete event is of an object we deleted; answers once per uid (the event comes once). */
  deletedByUs(obj: KubeObject): boolean {
    const { uid } = obj.metadata;
    return uid !== undefined && this.ownDeletes.delete(uid);
  }

  /** An apply of `obj` starts; call the returned function once its response is recorded (or it failed). */
  begin(obj: KubeObject): () => void {
    const key = keyOf(obj);
    let entry = this.inFlight.get(key);
    if (!entry) {
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      entry = { count: 0, done, resolve };
      this.inFlight.set(key, entry);
    }
    entry.count++;
    const e = entry;
    return () => {
      if (--e.count > 0) return;
      this.inFlight.delete(key);
      e.resolve();
    };
  }

  record(obj: KubeObject): void {
    const { uid, resourceVersion } = obj.metadata;
    if (!uid || !resourceVersion) return;
    this.byUid.delete(uid); // re-inserted last: the oldest go first when full
    this.byUid.set(uid, resourceVersion);
    if (this.keepShapes) this.shapes.set(uid, appliedShape(obj));
    this.seenByWatch.delete(uid);
    if (this.byUid.size > this.max) {
      const oldest = this.byUid.keys().next().value!;
      this.byUid.delete(oldest);
      this.shapes.delete(oldest);
      this.seenByWatch.delete(oldest);
    }
  }

  /**
   * A watch saw the object deleted: its uid will never come back (a re-create gets a new one), so what we
   * remember of it goes now, not when 50,000 newer writes push it out (the soak deletes units all day).
   */
  deleted(obj: KubeObject): void {
    const { uid } = obj.metadata;
    if (!uid) return;
    this.byUid.delete(uid);
    this.shapes.delete(uid);
    this.seenByWatch.delete(uid);
  }

  /** Objects remembered now (tests, metrics). */
  get size(): number {
    return this.byUid.size;
  }

  /** Resolves once no apply of this object is in flight (at once when none is). */
  async settled(obj: KubeObject): Promise<void> {
    while (this.inFlight.has(keyOf(obj))) await this.inFlight.get(keyOf(obj))!.done;
  }

  /**
   * A watch delivered this copy (after `settled`): when it is our newest write, that watch has caught up with
   * it, and since a watch delivers each object's changes in order, every copy it holds later is at least as new
   * (a controller's status update on top of ours, say) — live-cache.ts may trust those.
   */
  watched(obj: KubeObject): void {
    if (this.isOwn(obj)) this.seenByWatch.add(obj.metadata.uid!);
  }

  /** Whether a watch has delivered our newest write of this object (see `watched`). */
  caughtUp(uid: string): boolean {
    return this.seenByWatch.has(uid);
  }

  /**
   * A read from the API server agreed with the watch's copy of this object: the watch holds our newest write or
   * something newer, so it has caught up (as after `watched`).
   */
  confirmed(uid: string): void {
    if (this.byUid.has(uid)) this.seenByWatch.add(uid);
  }

  /**
   * Whether a watch's copy of an object (its uid and resourceVersion) can stand for the live one: it carries our
   * newest write's resourceVersion, or we remember no write of it (none since start, or forgotten past the
   * bound), or the watch has already delivered our newest write (`caughtUp`). Otherwise it may lag behind our
   * write, and a resourceVersion is opaque (no "newer than"): the caller reads it from the API server.
   */
  trustsCopy(uid: string | undefined, resourceVersion: string | undefined): boolean {
    if (uid === undefined) return true;
    const ours = this.byUid.get(uid);
    return ours === undefined || ours === resourceVersion || this.caughtUp(uid);
  }

  /**
   * Whether a copy that came with no copy before it (a watch's first list) shows a change outside status since our
   * newest write; false when it is that write, and when we remember no write of it (none since this controller
   * started: its first reconcile of every PackageSync compares the live objects anyway).
   */
  changedSinceOurs(obj: KubeObject): boolean {
    const { uid } = obj.metadata;
    const shape = uid === undefined ? undefined : this.shapes.get(uid);
    return shape !== undefined && !this.isOwn(obj) && differsFromApplied(shape, obj);
  }

  isOwn(obj: KubeObject): boolean {
    const { uid, resourceVersion } = obj.metadata;
    return uid !== undefined && resourceVersion !== undefined && this.byUid.get(uid) === resourceVersion;
  }
}

const keyOf = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
