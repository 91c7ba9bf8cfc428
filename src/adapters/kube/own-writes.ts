/**
 * The resourceVersions our own applies produced, per object uid (the newest only, bounded): a watch event
 * carrying one of them is our write coming back, not someone changing the object (controller/drift-watch.ts).
 */
import type { KubeObject } from '../../core/object.ts';

export class OwnWrites {
  private readonly byUid = new Map<string, string>();
  private readonly max: number;

  constructor(max = 50_000) {
    this.max = max;
  }

  record(obj: KubeObject): void {
    const { uid, resourceVersion } = obj.metadata;
    if (!uid || !resourceVersion) return;
    this.byUid.delete(uid); // re-inserted last: the oldest go first when full
    this.byUid.set(uid, resourceVersion);
    if (this.byUid.size > this.max) this.byUid.delete(this.byUid.keys().next().value!);
  }

  isOwn(obj: KubeObject): boolean {
    const { uid, resourceVersion } = obj.metadata;
    return uid !== undefined && resourceVersion !== undefined && this.byUid.get(uid) === resourceVersion;
  }
}
