/**
 * Where the health wait reads live objects from, and what wakes it:
 * - watchSource: the shared watches (adapters/kube/watch-cache.ts); wakes on a watch event of one of its
 *   objects or of a child it reads (core/health/wakeups.ts), or on a watch of its own syncing or being
 *   refused. Used for the controller's own identity.
 * - listSource: labelled LISTs, polled with back-off. Used when a PackageSync impersonates a
 *   ServiceAccount (reads must be that identity's, and the shared watches are the controller's), by the
 *   CLI, and for a kind whose watch has not synced yet.
 * Children (Pods, ReplicaSets) are read only for workloads that are not Current.
 */
import type { PackageObjects } from './ports.ts';
import type { WatchCache, WatchWant } from '../adapters/kube/watch-cache.ts';
import { WakeInterest } from '../core/health/wakeups.ts';
import { groupOf, refKey, refOf, type KubeObject, type ObjectRef } from '../core/object.ts';

export interface HealthSource {
  /** The live copies of these objects, keyed by refKey; an absent key = not found. */
  read(refs: readonly ObjectRef[]): Promise<Map<string, KubeObject>>;
  /** ReplicaSets and Pods that may explain these workloads (all of them not Current; [] = none). */
  children(workloads: readonly KubeObject[]): Promise<KubeObject[]>;
  /** Resolves at the next change worth a look, after `maxMs` at the latest, or at once on abort. */
  changed(maxMs: number, signal: AbortSignal): Promise<void>;
  /** Releases what the source holds (watches). */
  close(): void;
}

interface ReadOptions {
  signal: AbortSignal;
}

/**
 * The pause before the n-th poll (0-based) of a polled health wait: every 250 ms for the first 1.5 s, when
 * most objects settle (a Deployment of a few replicas, a Job's first Pod), then backing off to 2 s. A plain
 * doubling from 250 ms polled at 0.25, 0.75, 1.75 and 3.75 s, so an object Current at 0.8 s was seen a second
 * late: in a rollout, whose waves each wait for their slowest target, that second was paid once per wave.
 */
export function pollDelayMs(n: number): number {
  const steady = 6;
  return n < steady ? 250 : Math.min(250 * 2 ** (n - steady + 1), 2000);
}

/**
 * Polls with labelled LISTs, one per (kind, namespace) of the package, as the package's own identity, at
 * `pollDelayMs`.
 */
export function listSource(objects: PackageObjects, opts: ReadOptions): HealthSource {
  let polls = 0;
  return {
    read: (refs) => listOwned(objects, refs, opts),
    children: async (workloads) => (await Promise.all(workloads.map((w) => listChildren(objects, w, opts)))).flat(),
    changed: async (maxMs, signal) => {
      await sleep(Math.min(pollDelayMs(polls++), maxMs), signal);
    },
    close: () => undefined,
  };
}

/** How long a read waits for a just-started watch's first list before asking the API server itself. */
const SYNC_WAIT_MS = 5_000;

/**
 * Reads from the shared watches on behalf of one PackageSync (`holder`), holding the package's kinds while
 * the wait runs and Pods/ReplicaSets only while a workload is not Current. Falls back to `fallback` for a
 * watch that has not delivered its first list in time.
 */
export function watchSource(cache: WatchCache, holder: string, fallback: HealthSource): HealthSource {
  const objectsHolder = `${holder}#objects`;
  const childrenHolder = `${holder}#children`;
  // the watch keys each half holds now: only their events wake the wait, and of those only the events of
  // its own objects and children (a Set lookup per event and wait), or an event of the watch itself
  const tracked = { objects: new Set<string>(), children: new Set<string>() };
  const interest = new WakeInterest();
  let dirty = false;
  let wake: (() => void) | undefined;
  const unsubscribe = cache.subscribe((key, obj, old) => {
    if (!tracked.objects.has(key) && !tracked.children.has(key)) return;
    if (obj && !interest.wants(obj, old)) return;
    dirty = true;
    wake?.();
  });
  const track = (keys: (string | undefined)[], purpose: keyof typeof tracked) => {
    tracked[purpose] = new Set(keys.filter((k): k is string => k !== undefined));
  };

  return {
    async read(refs) {
      dirty = false;
      interest.watch(refs);
      const groups = groupByKind(refs);
      const wants: WatchWant[] = groups.map((g) => ({ ...g.want, objects: 'owned' }));
      const keys = await cache.hold(objectsHolder, wants);
      track(keys, 'objects');
      await cache.synced(keys, SYNC_WAIT_MS);
      const out = new Map<string, KubeObject>();
      const missed: ObjectRef[] = [];
      groups.forEach((g, i) => {
        const key = keys[i];
        const got = key ? cache.lookup(key, g.refs) : { synced: false as const };
        if (!got.synced) return missed.push(...g.refs);
        for (const o of got.items) out.set(refKey(refOf(o)), o);
      });
      if (missed.length > 0) for (const [k, o] of await fallback.read(missed)) out.set(k, o);
      return out;
    },

    async children(workloads) {
      if (workloads.length === 0) {
        cache.release(childrenHolder);
        track([], 'children');
        interest.explain([], []);
        return [];
      }
      const wants = new Map<string, WatchWant>();
      for (const w of workloads) {
        const namespace = w.metadata.namespace ?? '';
        wants.set(`Pod/${namespace}`, { group: '', kind: 'Pod', namespace, objects: 'all' });
        if (w.kind === 'Deployment' && groupOf(w.apiVersion) === 'apps')
          wants.set(`RS/${namespace}`, { group: 'apps', kind: 'ReplicaSet', namespace, objects: 'all' });
      }
      const list = [...wants.values()];
      const keys = await cache.hold(childrenHolder, list);
      track(keys, 'children');
      await cache.synced(keys, SYNC_WAIT_MS);
      // found through the watches' owner index: the ReplicaSets the workloads own, then the Pods they or those
      // ReplicaSets own — a namespace holding a fleet's thousands is never scanned (core/health checks each owner)
      const keyOf = (kind: string, namespace: string) =>
        keys[list.findIndex((w) => w.kind === kind && w.namespace === namespace)];
      const readFallback = async () => {
        // the workloads' own events count meanwhile; the ReplicaSets listed name more Pod owners after
        interest.explain(workloads, []);
        const listed = await fallback.children(workloads);
        interest.explain(workloads, listed);
        return listed;
      };
      const out: KubeObject[] = [];
      for (const namespace of new Set(workloads.map((w) => w.metadata.namespace ?? ''))) {
        const owners = workloads.filter((w) => (w.metadata.namespace ?? '') === namespace).map((w) => w.metadata.name);
        const rsKey = keyOf('ReplicaSet', namespace);
        const replicaSets = rsKey ? cache.readOwnedBy(rsKey, namespace, owners) : { synced: true as const, items: [] };
        const podKey = keyOf('Pod', namespace);
        if (!podKey || !replicaSets.synced) return readFallback();
        const pods = cache.readOwnedBy(podKey, namespace, [
          ...owners,
          ...replicaSets.items.map((rs) => rs.metadata.name),
        ]);
        if (!pods.synced) return readFallback();
        out.push(...replicaSets.items, ...pods.items);
      }
      // in the same turn as the reads: an event after them finds the wait interested
      interest.explain(workloads, out);
      return out;
    },

    async changed(maxMs, signal) {
      if (dirty || signal.aborted) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, maxMs);
        signal.addEventListener('abort', done);
        wake = done;
      });
    },

    close() {
      unsubscribe();
      cache.release(objectsHolder);
      cache.release(childrenHolder);
    },
  };
}

interface KindGroup {
  want: Omit<WatchWant, 'objects'>;
  refs: ObjectRef[];
}

function groupByKind(refs: readonly ObjectRef[]): KindGroup[] {
  const groups = new Map<string, KindGroup>();
  for (const r of refs) {
    const k = `${r.group}/${r.kind}/${r.namespace}`;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = { want: { group: r.group, kind: r.kind, namespace: r.namespace }, refs: [] }));
    g.refs.push(r);
  }
  return [...groups.values()];
}

async function listOwned(
  objects: PackageObjects,
  refs: readonly ObjectRef[],
  opts: ReadOptions,
): Promise<Map<string, KubeObject>> {
  const out = new Map<string, KubeObject>();
  await Promise.all(
    groupByKind(refs).map(async (g) => {
      const m = await objects.discovery.mapping(g.want.group, g.want.kind);
      if (!m) return;
      const wanted = new Set(g.refs.map(refKey));
      for (const o of await objects.listOwned(m, m.namespaced ? g.want.namespace : '', opts)) {
        const k = refKey(refOf(o));
        if (wanted.has(k)) out.set(k, o);
      }
    }),
  );
  return out;
}

/** The Pods (and ReplicaSets, for a Deployment) selected by a workload's selector. */
async function listChildren(objects: PackageObjects, workload: KubeObject, opts: ReadOptions): Promise<KubeObject[]> {
  const spec = workload.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined;
  const labels = spec?.selector?.matchLabels;
  if (!labels || Object.keys(labels).length === 0) return [];
  const selector = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const ns = workload.metadata.namespace ?? '';
  const kinds: [string, string][] = [['', 'Pod']];
  if (workload.kind === 'Deployment') kinds.push(['apps', 'ReplicaSet']);
  const lists = await Promise.all(
    kinds.map(async ([group, kind]) => {
      const m = await objects.discovery.mapping(group, kind);
      return m ? objects.list(m, ns, selector, opts).catch(() => []) : [];
    }),
  );
  return lists.flat();
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
