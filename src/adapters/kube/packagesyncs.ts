/** Reads and writes PackageSync objects themselves: status, finalizer, events. */
import { API_VERSION, GROUP, KIND, PLURAL, VERSION, type PackageSync, type Status } from '../../api/packagesync.ts';
import { rebaseStatus } from '../../core/status-rebase.ts';
import { KubeApiError, isConflict, isNotFound, type KubeClient } from './client.ts';

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

  constructor(client: KubeClient, component = 'packagesync-controller') {
    this.client = client;
    this.component = component;
  }

  async get(namespace: string, name: string): Promise<PackageSync | undefined> {
    return this.read(namespace, name);
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

  /**
   * One merge patch of the status subresource, guarded by the resourceVersion `ps` was read at, so a
   * write that arrives late can never overwrite a newer one. On a conflict it reads the PackageSync
   * again and retries with core/status-rebase.ts deciding what to write (ours; plus the inventory
   * entries another writer added meanwhile). Returns the PackageSync as written; a PackageSync deleted
   * meanwhile is not an error (undefined).
   */
  async writeStatus(ps: PackageSync, status: Status): Promise<PackageSync | undefined> {
    let current = ps;
    let next = status;
    for (let attempt = 0; ; attempt++) {
      const { namespace, name, resourceVersion } = current.metadata;
      try {
        return await this.client.request<PackageSync>('PATCH', `${objectPath(namespace, name)}/status`, {
          contentType: 'application/merge-patch+json',
          // a merge patch keeps what it does not name: a list the reducer dropped (failures, cause, drift) must be nulled to go
          body: {
            metadata: resourceVersion ? { resourceVersion } : {},
            status: { failures: null, cause: null, drift: null, ...next },
          },
        });
      } catch (e) {
        if (isNotFound(e)) return undefined;
        if (!isConflict(e) || attempt >= 10) throw e;
        // several writers racing (a test, a CLI next to the controller): spread the retries out
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.random() * 50 * attempt));
        const fresh = await this.read(namespace, name);
        if (!fresh) return undefined;
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
        return await this.client.request<PackageSync>(
          'PATCH',
          objectPath(current.metadata.namespace, current.metadata.name),
          {
            contentType: 'application/merge-patch+json',
            body: { metadata: { finalizers, resourceVersion: current.metadata.resourceVersion } },
          },
        );
      } catch (e) {
        if (isNotFound(e)) return undefined;
        if (!isConflict(e) || attempt >= 5) throw e;
        current = await this.read(current.metadata.namespace, current.metadata.name);
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
   * one per retry. Best effort.
   */
  async event(ps: PackageSync, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
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
              apiVersion: API_VERSION,
              kind: KIND,
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
