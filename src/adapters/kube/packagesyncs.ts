/** Reads and writes PackageSync objects themselves: status, finalizer, events. */
import { API_VERSION, GROUP, KIND, PLURAL, VERSION, type PackageSync, type Status } from '../../api/packagesync.ts';
import { rebaseStatus } from '../../core/status-rebase.ts';
import { DEFAULT_SHARD_OPTIONS, type ShardOptions } from '../../core/inventory-shards.ts';
import { KubeApiError, isConflict, isNotFound, type KubeClient } from './client.ts';
import { InventoryShards, InventoryUnreadableError } from './inventory-shards.ts';

const base = `/apis/${GROUP}/${VERSION}`;
export const packageSyncCollectionPath = (namespace?: string) =>
  namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${PLURAL}` : `${base}/${PLURAL}`;
const objectPath = (namespace: string, name: string) =>
  `${packageSyncCollectionPath(namespace)}/${encodeURIComponent(name)}`;

/**
 * A repeat of the same event (same PackageSync, type, reason and message) within this window bumps the
 * count of the event already written instead of writing another, as client-go's EventCorrelator does.
 */
const EVENT_SERIES_WINDOW_MS = 10 * 60_000;
/** Event series remembered at most (oldest forgotten first): the memory bound of the correlation. */
const EVENT_SERIES_MAX = 4096;

/** What an Event is about: a PackageSync (its kind is implied), or another object of the API group naming its own. */
export interface EventSubject {
  apiVersion?: string;
  kind?: string;
  metadata: Pick<PackageSync['metadata'], 'name' | 'namespace' | 'uid' | 'resourceVersion'>;
}

interface EventSeries {
  namespace: string;
  name: string;
  count: number;
  firstTimestamp: string;
  at: number;
}

export class PackageSyncs {
  private readonly client: KubeClient;
  private readonly component: string;
  /** Recent events by what makes them the same, oldest first (Map keeps insertion order). */
  private readonly series = new Map<string, EventSeries>();

  /** An inventory past the spill threshold lives in shard ConfigMaps (ADR 0027): read and written here. */
  readonly shards: InventoryShards;

  constructor(client: KubeClient, component = 'packagesync-controller', shards: ShardOptions = DEFAULT_SHARD_OPTIONS) {
    this.client = client;
    this.component = component;
    this.shards = new InventoryShards(client, shards);
  }

  /**
   * The PackageSync with its whole inventory in status.inventory.entries, wherever it is stored (inline or
   * in shards). Throws InventoryUnreadableError when a shard it names is missing or altered.
   */
  async get(namespace: string, name: string): Promise<PackageSync | undefined> {
    const ps = await this.getStored(namespace, name);
    return ps && this.expand(ps);
  }

  /**
   * As stored: a spilled inventory's entries are empty (enough for conditions, spec, metadata). A subclass may
   * answer from a watch (controller/watched-package-syncs.ts).
   */
  async getStored(namespace: string, name: string): Promise<PackageSync | undefined> {
    return this.read(namespace, name);
  }

  /**
   * The stored PackageSync as a watch holds it now, shared and not to be changed, when that copy is known to be
   * current; undefined otherwise (always here: a subclass may answer from a watch). For comparing its
   * resourceVersion without a copy (engine/unchanged-check.ts).
   */
  peekStored(_namespace: string, _name: string): Readonly<PackageSync> | undefined {
    return undefined;
  }

  /** Always a GET: what a conflict retry must see, whatever `get` may answer from (controller/watched-package-syncs.ts). */
  protected async read(namespace: string, name: string): Promise<PackageSync | undefined> {
    try {
      return await this.client.request<PackageSync>('GET', objectPath(namespace, name));
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** A PackageSync as stored (from a watch, a list) with its whole inventory read; see get. */
  async expand(ps: PackageSync): Promise<PackageSync> {
    const expanded = await this.shards.expand(ps);
    if (!expanded.ok) throw new InventoryUnreadableError(expanded.failure, ps);
    return expanded.value;
  }

  /**
   * One merge patch of the status subresource, guarded by the resourceVersion `ps` was read at, so a
   * write that arrives late can never overwrite a newer one. On a conflict it reads the PackageSync
   * again and retries with core/status-rebase.ts deciding what to write (ours; plus the inventory
   * entries another writer added meanwhile). Returns the PackageSync as written; a PackageSync deleted
   * meanwhile is not an error (undefined).
   *
   * `ps` and `status` carry the whole inventory (as get returns it). Past the spill threshold the write has
   * three steps (ADR 0027): create the shards the new inventory needs, write the status naming them, delete
   * the shards it no longer names. A crash between any two leaves a status whose shards all exist.
   */
  async writeStatus(ps: PackageSync, status: Status): Promise<PackageSync | undefined> {
    let current = ps;
    let next = status;
    // shards this call created for an attempt that lost a conflict: removed once the status no longer can name them
    const created = new Set<string>();
    for (let attempt = 0; ; attempt++) {
      const { namespace, name, resourceVersion } = current.metadata;
      // each attempt against the status it is based on; a retry makes sure every shard it names exists (the
      // other writer may have deleted one it no longer needed)
      const prepared = next.inventory
        ? await this.shards.prepare(current, next.inventory.entries, attempt > 0)
        : undefined;
      const write = prepared?.write;
      prepared?.created.forEach((n) => created.add(n));
      const inventory = write && {
        ...write.inventory,
        // a merge patch keeps what it does not name: back inline, the shards must be nulled to go
        ...(write.inventory.shards ? {} : { shards: null, count: null }),
      };
      try {
        const written = await this.client.request<PackageSync>('PATCH', `${objectPath(namespace, name)}/status`, {
          contentType: 'application/merge-patch+json',
          // a merge patch keeps what it does not name: a list the reducer dropped (failures, cause, drift) must be nulled to go
          body: {
            metadata: resourceVersion ? { resourceVersion } : {},
            status: { failures: null, cause: null, drift: null, ...next, ...(inventory ? { inventory } : {}) },
          },
        });
        if (!write || !written.status?.inventory) return written;
        const named = new Set((write.inventory.shards ?? []).map((r) => r.name));
        await this.shards.remove(namespace, [
          ...write.removeAfter,
          ...[...created].filter((n) => !named.has(n) && !write.removeAfter.includes(n)),
        ]);
        // the caller goes on with the whole inventory, as it sent it
        const entries = write.inventory.shards ? next.inventory!.entries : written.status.inventory.entries;
        return { ...written, status: { ...written.status, inventory: { ...write.inventory, entries } } };
      } catch (e) {
        if (isNotFound(e)) return undefined;
        if (!isConflict(e) || attempt >= 10) throw e;
        // several writers racing (a test, a CLI next to the controller): spread the retries out
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.random() * 50 * attempt));
        // the other writer's inventory, shards read: the union needs its entries
        const stored = await this.read(namespace, name);
        if (!stored) return undefined;
        const fresh = await this.expand(stored);
        next = rebaseStatus(next, current.status, fresh.status);
        current = fresh;
      }
    }
  }

  /** Adds or removes our finalizer with an optimistic-concurrency merge patch (retried on conflict). */
  async setFinalizer(ps: PackageSync, finalizer: string, present: boolean): Promise<PackageSync | undefined> {
    let current: PackageSync | undefined = ps;
    for (let attempt = 0; current; attempt++) {
      const list = current.metadata.finalizers ?? [];
      if (list.includes(finalizer) === present) return current;
      const finalizers = present ? [...list, finalizer] : list.filter((f) => f !== finalizer);
      try {
        const patched = await this.client.request<PackageSync>(
          'PATCH',
          objectPath(current.metadata.namespace, current.metadata.name),
          {
            contentType: 'application/merge-patch+json',
            body: { metadata: { finalizers, resourceVersion: current.metadata.resourceVersion } },
          },
        );
        return keepInventory(patched, current);
      } catch (e) {
        if (isNotFound(e)) return undefined;
        if (!isConflict(e) || attempt >= 5) throw e;
        const stored = await this.read(current.metadata.namespace, current.metadata.name);
        current = stored && (await this.expand(stored));
      }
    }
    return undefined;
  }

  async setAnnotation(namespace: string, name: string, key: string, value: string | null): Promise<void> {
    await this.client.request('PATCH', objectPath(namespace, name), {
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { [key]: value } } },
    });
  }

  async patchSpec(namespace: string, name: string, spec: Record<string, unknown>): Promise<void> {
    await this.client.request('PATCH', objectPath(namespace, name), {
      contentType: 'application/merge-patch+json',
      body: { spec },
    });
  }

  /**
   * A core/v1 Event on the PackageSync, so `kubectl describe pks` shows what happened. A repeat within ten
   * minutes counts up the event already written (`kubectl describe` shows "x5 over 3m") instead of adding
   * one per retry. Best effort. Another kind of this API group (a PackageSyncSet) names its own kind.
   */
  async event(ps: EventSubject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const now = new Date().toISOString();
    const ns = ps.metadata.namespace;
    const text = message.length > 1024 ? `${message.slice(0, 1023)}…` : message;
    const key = JSON.stringify([ns, ps.metadata.name, ps.metadata.uid, type, reason, text]);
    const earlier = this.series.get(key);
    this.series.delete(key);
    if (earlier && Date.now() - earlier.at < EVENT_SERIES_WINDOW_MS) {
      const counted = await this.countAgain(earlier, now);
      if (counted) return this.remember(key, { ...earlier, count: earlier.count + 1, at: Date.now() });
    }
    try {
      const created = await this.client.request<{ metadata: { name: string } }>(
        'POST',
        `/api/v1/namespaces/${encodeURIComponent(ns)}/events`,
        {
          body: {
            apiVersion: 'v1',
            kind: 'Event',
            metadata: { generateName: `${ps.metadata.name}.`, namespace: ns },
            involvedObject: {
              apiVersion: ps.apiVersion ?? API_VERSION,
              kind: ps.kind ?? KIND,
              name: ps.metadata.name,
              namespace: ns,
              uid: ps.metadata.uid,
              resourceVersion: ps.metadata.resourceVersion,
            },
            type,
            reason,
            message: text,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
            source: { component: this.component },
            reportingComponent: this.component,
            reportingInstance: this.component,
          },
        },
      );
      const name = created?.metadata?.name;
      if (name) this.remember(key, { namespace: ns, name, count: 1, firstTimestamp: now, at: Date.now() });
    } catch (e) {
      if (!(e instanceof KubeApiError)) throw e;
      // events are best effort: a namespace being deleted refuses them
    }
  }

  /** Bumps an event's count; false when it is gone (expired by the API server's event TTL): write a new one. */
  private async countAgain(series: EventSeries, now: string): Promise<boolean> {
    try {
      await this.client.request(
        'PATCH',
        `/api/v1/namespaces/${encodeURIComponent(series.namespace)}/events/${encodeURIComponent(series.name)}`,
        { contentType: 'application/merge-patch+json', body: { count: series.count + 1, lastTimestamp: now } },
      );
      return true;
    } catch (e) {
      if (!(e instanceof KubeApiError)) throw e;
      return false;
    }
  }

  private remember(key: string, series: EventSeries): void {
    this.series.set(key, series);
    if (this.series.size > EVENT_SERIES_MAX) this.series.delete(this.series.keys().next().value!);
  }
}

/** A metadata patch's answer carries the inventory as stored: put back the whole one `before` had (the patch was
 * guarded by its resourceVersion, so status did not move). */
function keepInventory(patched: PackageSync, before: PackageSync): PackageSync {
  const inventory = before.status?.inventory;
  if (!patched.status?.inventory?.shards || !inventory) return patched;
  return { ...patched, status: { ...patched.status, inventory } };
}
