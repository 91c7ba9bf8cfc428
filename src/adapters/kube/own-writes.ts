/**
 * The resourceVersions our own applies produced, per object uid (the newest only, bounded): a watch event
 * carrying one of them is our write coming back, not someone changing the object (controller/drift-watch.ts).
 *
 * The watch and the apply's response travel on different connections, so the event of our write can arrive
 * before the response that says which resourceVersion it was: while an apply of an object is in flight,
 * `settled` holds its events back until the response is in.
 */
import type { KubeObject } from '../../core/object.ts';

export class OwnWrites {
  private readonly byUid = new Map<string, string>();
  private readonly inFlight = new Map<string, { count: number; done: Promise<void>; resolve: () => void }>();
  private readonly max: number;

  constructor(max = 50_000) {
    this.max = max;
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
    if (this.byUid.size > this.max) this.byUid.delete(this.byUid.keys().next().value!);
  }

  /** Resolves once no apply of this object is in flight (at once when none is). */
  async settled(obj: KubeObject): Promise<void> {
    while (this.inFlight.has(keyOf(obj))) await this.inFlight.get(keyOf(obj))!.done;
  }

  /** The resourceVersion our newest apply of this object (by uid) produced, if remembered. */
  latest(uid: string): string | undefined {
    return this.byUid.get(uid);
  }

  isOwn(obj: KubeObject): boolean {
    const { uid, resourceVersion } = obj.metadata;
    return uid !== undefined && resourceVersion !== undefined && this.byUid.get(uid) === resourceVersion;
  }
}

const keyOf = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
