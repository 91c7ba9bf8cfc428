/**
 * Reads and writes the shards of an inventory that spilled out of status (core/inventory-shards.ts, ADR 0027):
 * ConfigMaps in the PackageSync's namespace, owned by it (the garbage collector removes them with it).
 *
 * A shard never changes once written (its name is its digest), so every shard read is cached by name: a
 * reconcile of an unchanged package reads none, and a changed one reads only shards it has not seen.
 */
import type { PackageSync } from '../../api/packagesync.ts';
import { API_VERSION, FIELD_MANAGER, KIND } from '../../api/packagesync.ts';
import type { Failure, Result } from '../../core/failure.ts';
import { fail, ok } from '../../core/failure.ts';
import { Reason } from '../../api/reasons.ts';
import { sortEntries, type InventoryEntry } from '../../core/inventory.ts';
import {
  compressShard,
  decodeShard,
  inventoryUnreadable,
  planInventoryWrite,
  SHARD_DATA_KEY,
  type InventoryWrite,
  type ShardOptions,
  type ShardRef,
  type StoredInventory,
} from '../../core/inventory-shards.ts';
import { isConflict, isNotFound, type KubeClient } from './client.ts';

/** Label on every shard: which PackageSync (by uid) it belongs to. */
export const SHARD_OWNER_LABEL = 'packagesync.io/inventory-of';
/** Entries kept in the read cache at most (all PackageSyncs together); the oldest shard goes first. */
const CACHE_ENTRIES = 2_000_000;

const configMapPath = (namespace: string, name?: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps${name ? `/${encodeURIComponent(name)}` : ''}`;

export class InventoryUnreadableError extends Error {
  readonly failure: Failure;
  /** The PackageSync as read, its inventory not expanded. */
  readonly packageSync: PackageSync;
  constructor(failure: Failure, ps: PackageSync) {
    super(failure.message);
    this.failure = failure;
    this.packageSync = ps;
  }
}

export class InventoryShards {
  private readonly client: KubeClient;
  readonly options: ShardOptions;
  private readonly cache = new Map<string, InventoryEntry[]>();
  private cached = 0;

  constructor(client: KubeClient, options: ShardOptions) {
    this.client = client;
    this.options = options;
  }

  /**
   * The PackageSync with status.inventory.entries holding every entry (its shards read, cached), shards and
   * count kept as stored. A PackageSync whose inventory is inline comes back as it is.
   */
  async expand(ps: PackageSync): Promise<Result<PackageSync>> {
    const stored = ps.status?.inventory;
    if (!stored?.shards?.length) return ok(ps);
    const { namespace, name, uid = '' } = ps.metadata;
    const parts = await Promise.all(stored.shards.map((ref) => this.read(namespace, ref, uid)));
    const entries: InventoryEntry[] = [];
    for (const part of parts) {
      if (!part.ok) return inventoryUnreadable(namespace, name, part.failure.message);
      entries.push(...part.value);
    }
    return ok({ ...ps, status: { ...ps.status, inventory: { ...stored, entries: sortEntries(entries) } } });
  }

  /**
   * Step one of a save: decides what status.inventory becomes and creates the shards it names that the
   * previous status did not (`everyShard`: all it names, for a retry after a conflict, when another writer may
   * have deleted one meanwhile). An existing shard is the same content: its name is its digest. Only after this
   * returns may the status naming them be written. `created`: the shards this call created (201).
   */
  async prepare(
    ps: PackageSync,
    entries: readonly InventoryEntry[],
    everyShard = false,
  ): Promise<{ write: InventoryWrite; created: string[] }> {
    const { name, namespace, uid = '' } = ps.metadata;
    const previous: StoredInventory | undefined = ps.status?.inventory;
    const write = planInventoryWrite(previous, entries, { name, uid }, this.options);
    const created: string[] = [];
    await Promise.all(
      (everyShard ? write.shards : write.create).map(async (shard) => {
        try {
          await this.client.request('POST', configMapPath(namespace), {
            body: {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: {
                name: shard.ref.name,
                namespace,
                labels: { 'app.kubernetes.io/managed-by': FIELD_MANAGER, [SHARD_OWNER_LABEL]: uid },
                // the garbage collector deletes the shards once the PackageSync is gone (after its finalizer)
                ownerReferences: uid ? [{ apiVersion: API_VERSION, kind: KIND, name, uid }] : [],
              },
              immutable: true,
              binaryData: { [SHARD_DATA_KEY]: compressShard(shard.text) },
            },
          });
          created.push(shard.ref.name);
        } catch (e) {
          if (!isConflict(e)) throw e; // AlreadyExists: the same content, written earlier
        }
        this.remember(shard.ref.name, shard.entries);
      }),
    );
    return { write, created };
  }

  /** Step three: shards the status no longer names (it was written). A shard already gone is fine. */
  async remove(namespace: string, names: readonly string[]): Promise<void> {
    await Promise.all(
      names.map(async (name) => {
        this.forget(name);
        try {
          await this.client.request('DELETE', configMapPath(namespace, name));
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }),
    );
  }

  private async read(namespace: string, ref: ShardRef, uid: string): Promise<Result<InventoryEntry[]>> {
    const hit = this.cache.get(ref.name);
    if (hit) return ok(hit);
    let data: string | undefined;
    try {
      const cm = await this.client.request<{ binaryData?: Record<string, string> }>(
        'GET',
        configMapPath(namespace, ref.name),
      );
      data = cm.binaryData?.[SHARD_DATA_KEY];
    } catch (e) {
      if (!isNotFound(e)) throw e;
      return fail(Reason.InventoryUnreadable, `inventory shard ConfigMap ${ref.name} does not exist`);
    }
    const decoded = decodeShard(ref, data, uid);
    if (decoded.ok) this.remember(ref.name, decoded.value);
    return decoded;
  }

  private remember(name: string, entries: InventoryEntry[]): void {
    if (this.cache.has(name)) return;
    this.cache.set(name, entries);
    this.cached += entries.length;
    for (const [oldest, list] of this.cache) {
      if (this.cached <= CACHE_ENTRIES) break;
      this.cache.delete(oldest);
      this.cached -= list.length;
    }
  }

  private forget(name: string): void {
    const list = this.cache.get(name);
    if (!list) return;
    this.cache.delete(name);
    this.cached -= list.length;
  }
}
