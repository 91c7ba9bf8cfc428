/**
 * The clusters PackageSyncs act in through spec.kubeConfig.secretRef: one client (connection pool), one
 * Discovery and one Objects per referenced Secret, cached by the Secret's resourceVersion, so that a fleet
 * of PackageSyncs sharing a kubeconfig shares its connections, and an edited Secret (new server, rotated
 * token) gets a fresh client on the next reconcile (the config watch reconciles at once). Discovery (REST
 * mapping, Helm's --kube-version and --api-versions) is the target cluster's.
 *
 * Each cluster also gets shared watches for the health wait (watch-cache.ts, on a connection pool of their own,
 * as the kubeconfig's identity): a fleet waiting on one cluster costs one watch per kind there, as in the
 * controller's own cluster, not a LIST per package every few hundred milliseconds, and sees an object become
 * Current when it does (docs/adr/0026). Nothing is watched until a wait holds a kind, and a watch nobody holds
 * stops after a linger.
 *
 * Reachability is checked before a reconcile acts: one discovery refresh when the client is new, then a
 * GET /version at most every PROBE_EVERY_MS per cluster (shared by every PackageSync using it), so an
 * unreachable cluster is a clear RemoteClusterUnreachable before anything is read, applied or pruned.
 */
import type { Logger } from 'pino';
import { isValidName } from '../../api/names.ts';
import type { KubeSecretRef } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import { errorText, fail, ok, type Result } from '../../core/failure.ts';
import { isNotFound, KubeApiError, KubeClient, type KubeClientOptions } from './client.ts';
import { Discovery } from './discovery.ts';
import { Objects } from './objects.ts';
import { kubeconfigFromSecret } from './remote-kubeconfig.ts';
import { WatchCache } from './watch-cache.ts';

/** A reachability answer is trusted this long before asking again. */
const PROBE_EVERY_MS = 10_000;
/** A probe is a small request: an unreachable cluster should not hold a reconcile for the full request timeout. */
const PROBE_TIMEOUT_MS = 5_000;
/** Clients kept at most; the least recently used is closed beyond this. */
const MAX_CLUSTERS = 64;

interface Entry {
  resourceVersion: string;
  client: KubeClient;
  /** The health wait's watches hold a connection each: a pool of their own, never the applies'. */
  watchClient: KubeClient;
  watches: WatchCache;
  objects: Objects;
  /** When the cluster last answered. */
  answeredAt: number;
  usedAt: number;
}

export interface RemoteClustersOptions {
  /** Options for each remote client (metrics hook, timeouts). */
  client?: Omit<KubeClientOptions, 'kubeconfig'>;
  /** Where a cluster's watches log a refusal (once per kind and namespace). */
  log?: Logger;
}

export class RemoteClusters {
  private readonly home: KubeClient;
  private readonly opts: RemoteClustersOptions;
  private readonly entries = new Map<string, Entry>();
  /** First contacts under way, by `<cache key>@<Secret resourceVersion>`. */
  private readonly connecting = new Map<string, Promise<Result<Entry>>>();

  constructor(home: KubeClient, opts: RemoteClustersOptions = {}) {
    this.home = home;
    this.opts = opts;
  }

  /**
   * The Objects of the cluster the Secret `namespace/ref.name` names, reachable now; a failure says which
   * Secret, key or field is wrong (KubeConfigInvalid) or that the cluster did not answer
   * (RemoteClusterUnreachable), never what the Secret holds.
   */
  async objectsFor(namespace: string, ref: KubeSecretRef, signal?: AbortSignal): Promise<Result<Objects>> {
    const where = `Secret ${namespace}/${ref.name}`;
    const secret = await this.readSecret(namespace, ref.name);
    if (!secret) {
      return fail(
        Reason.KubeConfigInvalid,
        `${where} named in spec.kubeConfig.secretRef does not exist; create it in the PackageSync's namespace`,
      );
    }
    const cacheKey = `${namespace}/${ref.name}/${ref.key ?? ''}`;
    let entry = this.entries.get(cacheKey);
    if (entry && entry.resourceVersion !== secret.resourceVersion) {
      this.drop(cacheKey);
      entry = undefined;
    }
    if (!entry) {
      // one first contact per Secret version, however many PackageSyncs of a fleet arrive at once: each made its
      // own client and discovery before, and all but the last stayed open, unreferenced
      const key = `${cacheKey}@${secret.resourceVersion}`;
      let pending = this.connecting.get(key);
      if (!pending) {
        pending = this.connect(cacheKey, where, secret, ref).finally(() => this.connecting.delete(key));
        this.connecting.set(key, pending);
      }
      const connected = await pending;
      if (!connected.ok) return connected;
      entry = connected.value;
    } else if (Date.now() - entry.answeredAt > PROBE_EVERY_MS) {
      try {
        await entry.client.request('GET', '/version', { timeoutMs: PROBE_TIMEOUT_MS, signal });
        entry.answeredAt = Date.now();
      } catch (e) {
        return unreachable(entry.client.server, where, e);
      }
    }
    entry.usedAt = Date.now();
    return ok(entry.objects);
  }

  /** First contact with a cluster: its client, then discovery, which every later step needs anyway. */
  private async connect(
    cacheKey: string,
    where: string,
    secret: { resourceVersion: string; data: Record<string, string> },
    ref: KubeSecretRef,
  ): Promise<Result<Entry>> {
    const kc = await kubeconfigFromSecret(where, secret.data, ref.key);
    if (!kc.ok) return kc;
    const client = await KubeClient.fromKubeconfig(kc.value, { ...this.opts.client });
    const watchClient = await KubeClient.fromKubeconfig(kc.value, { ...this.opts.client, connections: 256 });
    const discovery = new Discovery(client);
    const cluster = `${kc.value.info.server} (kubeconfig in ${where})`;
    const watches = new WatchCache(watchClient, discovery, this.opts.log ? { log: this.opts.log } : {});
    const objects = new Objects(client, discovery, undefined, cluster);
    objects.watches = watches;
    const entry: Entry = {
      resourceVersion: secret.resourceVersion,
      client,
      watchClient,
      watches,
      objects,
      answeredAt: 0,
      usedAt: Date.now(),
    };
    try {
      await discovery.refresh();
      entry.answeredAt = Date.now();
    } catch (e) {
      void closeEntry(entry);
      return unreachable(kc.value.info.server, where, e);
    }
    // another version's client (the Secret rotated during this contact) is closed, not left open unreferenced
    if (this.entries.has(cacheKey)) void this.drop(cacheKey);
    this.entries.set(cacheKey, entry);
    this.evict();
    return ok(entry);
  }

  /** Closes every remote client (shutdown). */
  async close(): Promise<void> {
    const all = [...this.entries.keys()];
    await Promise.all(all.map((k) => this.drop(k)));
  }

  /** How many remote clients are open (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }

  private async readSecret(
    namespace: string,
    name: string,
  ): Promise<{ resourceVersion: string; data: Record<string, string> } | undefined> {
    // issue 35: "other-ns/secret" became a subresource path; no Secret can have such a name (names.ts)
    if (!isValidName('name', name) || !isValidName('namespace', namespace)) return undefined;
    try {
      const s = await this.home.request<{ metadata: { resourceVersion: string }; data?: Record<string, string> }>(
        'GET',
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`,
      );
      const data: Record<string, string> = {};
      for (const [k, v] of Object.entries(s.data ?? {})) data[k] = Buffer.from(v, 'base64').toString('utf8');
      return { resourceVersion: s.metadata.resourceVersion, data };
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Closes a cluster's clients once their requests in flight are done (undici's close is graceful). */
  private drop(key: string): Promise<void> {
    const entry = this.entries.get(key);
    this.entries.delete(key);
    return entry ? closeEntry(entry) : Promise.resolve();
  }

  private evict(): void {
    while (this.entries.size > MAX_CLUSTERS) {
      const oldest = [...this.entries].sort((a, b) => a[1].usedAt - b[1].usedAt)[0]!;
      void this.drop(oldest[0]);
    }
  }
}

/** Stops the cluster's watches (a health wait on them reads directly from then on) and closes its clients. */
async function closeEntry(entry: Entry): Promise<void> {
  entry.watches.stop();
  await Promise.all([entry.client.close(), entry.watchClient.close()]).catch(() => undefined);
}

/** No answer is RemoteClusterUnreachable; an answer that refuses the credentials is the kubeconfig's fault. */
function unreachable(server: string, where: string, e: unknown) {
  if (e instanceof KubeApiError && (e.status === 401 || e.status === 403)) {
    return fail(
      Reason.KubeConfigInvalid,
      `the cluster at ${server} refused the credentials of the kubeconfig in ${where} (${e.status} ${e.reason}); ` +
        'nothing was applied or pruned',
    );
  }
  return fail(
    Reason.RemoteClusterUnreachable,
    `the cluster at ${server} (kubeconfig in ${where}) did not answer: ${errorText(e)}; nothing was applied or pruned`,
  );
}
