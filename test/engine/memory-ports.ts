/**
 * In-memory implementations of the engine's ports (src/engine/ports.ts), to test the engine's decisions in
 * milliseconds: which status it writes, which events it sends, what it applies and deletes, when it runs again.
 * Not a Kubernetes API: no HTTP, no admission, no server-side apply merge. An apply stores the object as sent (the
 * engine's digest annotation included), a delete removes it. What Kubernetes does with them is the e2e suite's to
 * prove, on the real control plane.
 */
import { pino } from 'pino';
import type { PackageSync, Status } from '../../src/api/packagesync.ts';
import type { ResourceMapping } from '../../src/adapters/kube/discovery.ts';
import type { LiveCache, WatchedPlace } from '../../src/adapters/kube/live-cache.ts';
import { fail, ok } from '../../src/core/failure.ts';
import { refKey, refOf, type KubeObject, type ObjectRef } from '../../src/core/object.ts';
import type { Owner } from '../../src/core/plan/ownership.ts';
import { SettledCheckpoints } from '../../src/engine/settled-checkpoints.ts';
import type {
  ClusterDiscovery,
  FetchedSource,
  PackageObjects,
  PackageSyncs,
  Ports,
  SourcePort,
} from '../../src/engine/ports.ts';
import type { SourceFile } from '../../src/core/render/types.ts';
import { plainPackage, readObjects } from '../../src/core/render/index.ts';
import type { BuildRequest, BuildTool, Renderer } from '../../src/adapters/render/build.ts';

const MAPPINGS: ResourceMapping[] = [
  { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true, verbs: ['list'] },
  { group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', namespaced: true, verbs: ['list'] },
  { group: '', version: 'v1', kind: 'Namespace', resource: 'namespaces', namespaced: false, verbs: ['list'] },
];

/** The cluster's objects, by refKey, and what was done to them. */
export class MemoryCluster {
  readonly objects = new Map<string, KubeObject>();
  readonly applied: string[] = [];
  readonly deleted: string[] = [];
  /** refKeys whose apply fails (an admission webhook refusing it, say). */
  readonly refuse = new Set<string>();
  /** The controller's watches over this cluster (made once: every view of the controller shares them). */
  liveCache: LiveCache | undefined;
  /** What discovery says the cluster serves (a Helm render's capabilities). */
  capabilities = { kubeVersion: 'v1.36.0', apiVersions: ['v1'] };
  private version = 100;

  put(obj: KubeObject): KubeObject {
    const stored = {
      ...obj,
      metadata: {
        ...obj.metadata,
        namespace: obj.metadata.namespace ?? '',
        uid: obj.metadata.uid ?? `uid-${obj.metadata.name}`,
        resourceVersion: String(++this.version),
      },
    };
    this.objects.set(refKey(refOf(stored)), stored);
    return stored;
  }
}

/** The package objects port (src/engine/ports.ts PackageObjects) over a MemoryCluster. */
function packageObjects(cluster: MemoryCluster, owner: Owner): PackageObjects {
  const mapping = async (group: string, kind: string) => MAPPINGS.find((m) => m.group === group && m.kind === kind);
  const discovery: ClusterDiscovery = {
    mapping,
    isNamespaced: (group: string, kind: string) =>
      MAPPINGS.find((m) => m.group === group && m.kind === kind)?.namespaced,
    refresh: async () => undefined,
    capabilities: async () => ({ ...cluster.capabilities }),
    listable: async () => MAPPINGS,
  };
  const inScope = (m: ResourceMapping, namespace: string) =>
    [...cluster.objects.values()].filter(
      (o) => o.kind === m.kind && (!m.namespaced || !namespace || o.metadata.namespace === namespace),
    );
  const found = (refs: readonly ObjectRef[]) => {
    const out = new Map<string, KubeObject>();
    for (const r of refs) {
      const o = cluster.objects.get(refKey(r));
      if (o) out.set(refKey(r), o);
    }
    return out;
  };
  // the controller's watches, always synced: every copy is current (one for the cluster, as the controller's)
  const liveCache: LiveCache = (cluster.liveCache ??= {
    lookup: async (_m: ResourceMapping, _ns: string, refs: readonly ObjectRef[]) => found(refs),
    unowned: async () => undefined,
    peek: async (_m: ResourceMapping, _ns: string, refs: readonly ObjectRef[]) => found(refs),
    places: async (m: ResourceMapping, namespace: string, refs: readonly ObjectRef[]) =>
      refs.map((r) => ({ watch: `owned|${m.kind}`, namespace: m.namespaced ? namespace : '', name: r.name })),
    held: (p: WatchedPlace) =>
      [...cluster.objects.values()].find(
        (o) =>
          `owned|${o.kind}` === p.watch && (o.metadata.namespace ?? '') === p.namespace && o.metadata.name === p.name,
      ),
  });
  const self: PackageObjects = {
    owner,
    identity: undefined,
    cluster: undefined,
    discovery,
    liveCache,
    mappingFor: async (group: string, kind: string) => {
      const m = await mapping(group, kind);
      return m ? ok(m) : fail('UnknownKind', kind);
    },
    get: async (ref: ObjectRef) => cluster.objects.get(refKey(ref)),
    list: async (m: ResourceMapping, namespace: string) => inScope(m, namespace),
    listOwned: async (m: ResourceMapping, namespace: string) =>
      inScope(m, namespace).filter((o) => o.metadata.labels?.['packagesync.io/name'] === owner.name),
    apply: async (obj: KubeObject) => {
      const key = refKey(refOf(obj));
      if (cluster.refuse.has(key))
        throw Object.assign(new Error(`admission webhook denied ${obj.metadata.name}`), { status: 422 });
      const created = !cluster.objects.has(key);
      cluster.applied.push(key);
      return { created, object: cluster.put(obj) };
    },
    create: async (obj: KubeObject) => {
      if (cluster.objects.has(refKey(refOf(obj)))) return undefined;
      return (await self.apply(obj)).object;
    },
    delete: async (ref: ObjectRef) => {
      cluster.deleted.push(refKey(ref));
      cluster.objects.delete(refKey(ref));
      return { gone: true as const };
    },
    forPackage: (o: Owner) => packageObjects(cluster, o),
  };
  return self;
}

/** The PackageSyncs port over one stored PackageSync, recording status writes and events. */
export class MemoryPackageSyncs implements PackageSyncs {
  readonly stored = new Map<string, PackageSync>();
  readonly statusWrites: Status[] = [];
  readonly events: string[] = [];
  private version = 1;

  put(ps: PackageSync): PackageSync {
    const stored = { ...ps, metadata: { ...ps.metadata, resourceVersion: String(++this.version) } };
    this.stored.set(`${ps.metadata.namespace}/${ps.metadata.name}`, stored);
    return stored;
  }

  get = async (namespace: string, name: string) => this.stored.get(`${namespace}/${name}`);
  getStored = this.get;
  peekStored = (namespace: string, name: string) => this.stored.get(`${namespace}/${name}`);
  writeStatus = async (ps: PackageSync, status: Status) => {
    this.statusWrites.push(status);
    return this.put({ ...ps, status });
  };
  setFinalizer = async (ps: PackageSync, finalizer: string, present: boolean) => {
    const list = ps.metadata.finalizers ?? [];
    if (list.includes(finalizer) === present) return ps;
    const finalizers = present ? [...list, finalizer] : list.filter((f) => f !== finalizer);
    return this.put({ ...ps, metadata: { ...ps.metadata, finalizers } });
  };
  event = async (_ps: PackageSync, type: string, reason: string, message: string) => {
    this.events.push(`${type} ${reason}: ${message}`);
  };
}

/** A git source of one package: its files at the commit the ref names. */
export class MemorySource {
  commit = 'a'.repeat(40);
  /** What the package reads in the commit (pathRevision). */
  tree = 'tree-1';
  /** Whether the package read the same at the last attempted commit (a commit elsewhere in a monorepo). */
  samePackage = false;
  files: SourceFile[] = [];
  fetches = 0;
  forgotten = 0;
  /** The `since` of each forget: when the request was seen (undefined: now). */
  readonly forgottenSince: (number | undefined)[] = [];

  fetched(): FetchedSource {
    return {
      revision: `main@sha1:${this.commit}`,
      commit: this.commit,
      files: this.files,
      checkoutRoot: '/checkout',
      packagePath: '.',
      pathRevision: this.tree,
      samePackageAt: async () => this.samePackage,
    };
  }

  port(): SourcePort {
    return {
      fetch: async () => {
        this.fetches++;
        return { ok: true as const, value: this.fetched() };
      },
      resolve: async () => ({ ok: true as const, value: this.commit }),
      forget: (_url, since) => {
        this.forgotten++;
        this.forgottenSince.push(since);
      },
    };
  }
}

/**
 * The render tools: a package is the tool `tool` says (plain by default; `helm` or `kustomize` as a checkout with a
 * Chart.yaml or a kustomization would be), and its build reads the files as plain manifests. Counts the builds: a
 * shortcut taken runs none.
 */
export class MemoryRenderer implements Renderer {
  tool: BuildTool = 'plain';
  readonly builds: BuildRequest[] = [];

  toolFor = async () => this.tool;
  build = async (req: BuildRequest) => {
    this.builds.push(req);
    const objects = readObjects(req.files, req.substitution);
    return objects.ok ? ok({ tool: this.tool, objects: objects.value, what: plainPackage(req.files.length) }) : objects;
  };
  stats = () => ({ toolRuns: this.builds.length, toolSeconds: 0, cacheHits: 0 });
  close = () => undefined;
}

/** Everything a reconcile reads and writes, in memory. */
export function memoryWorld() {
  const cluster = new MemoryCluster();
  const packageSyncs = new MemoryPackageSyncs();
  const source = new MemorySource();
  const render = new MemoryRenderer();
  const secrets = new Map<string, Record<string, string>>();
  const configMaps = new Map<string, Record<string, string>>();
  const stops: string[] = [];
  const checkpoints = new SettledCheckpoints();
  const objects = packageObjects(cluster, { name: '', namespace: '' });
  const ports: Ports = {
    objects,
    packageSyncs,
    source: source.port(),
    secrets: { read: async (_ns: string, name: string) => secrets.get(name) },
    configMaps: { read: async (_ns: string, name: string) => configMaps.get(name) },
    log: pino({ level: 'silent' }),
    render,
    checkpoints,
    observe: { unchangedCheck: (stopped) => void stops.push(stopped) },
  };
  return { ports, cluster, packageSyncs, source, render, secrets, configMaps, stops, checkpoints };
}
export type MemoryWorld = ReturnType<typeof memoryWorld>;
