/**
 * Reading, applying and deleting package objects. An Objects acts as one identity, fixed when it is made:
 * the controller's own, or a tenant's ServiceAccount (impersonation), so the API server's RBAC decides what a
 * PackageSync may touch. A reconcile makes its PackageObjects once (`forPackage`), and no step below it can
 * pick another identity.
 */
import { assertValidName } from '../../api/names.ts';
import { FIELD_MANAGER } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { groupOf, versionOf, type KubeObject, type ObjectRef } from '../../core/object.ts';
import { ownerSelector, type Owner } from '../../core/plan/ownership.ts';
import { KubeApiError, isConflict, isNotFound, type KubeClient } from './client.ts';
import { resourcePath, type Discovery, type ResourceMapping } from './discovery.ts';
import type { LiveCache } from './live-cache.ts';
import type { OwnWrites } from './own-writes.ts';
import type { WatchCache } from './watch-cache.ts';

export { applyFailure, fieldConflicts } from './failures.ts';

/** Sent as metadata.resourceVersion by a create-only apply: no stored object has it (java-operator-sdk does the same). */
const CREATE_ONLY_RESOURCE_VERSION = '1';

/** A create-only apply met an existing object. */
class ObjectExists extends Error {}

export interface ObjectsOptions {
  signal?: AbortSignal;
}

export class Objects {
  protected readonly client: KubeClient;
  readonly discovery: Discovery;
  /** The user every request impersonates (`system:serviceaccount:<ns>:<name>`); undefined: the client's own. */
  readonly identity: string | undefined;
  /** Where applies record the resourceVersions they produced (the controller's drift watch); optional. */
  ownWrites: OwnWrites | undefined;
  /**
   * The controller's shared watches, for live reads (live-cache.ts); optional. A package view gets it only when
   * it reads as the controller in the controller's cluster: a ServiceAccount's reads must be its own.
   */
  liveCache: LiveCache | undefined;
  /**
   * A remote cluster's shared watches for the health wait (remote-clusters.ts), read as the kubeconfig's identity;
   * a package view gets them only when it reads as that identity. Undefined in the controller's own cluster,
   * whose watches the engine holds (Ports.watches), and for the CLI.
   */
  watches: WatchCache | undefined;
  /**
   * Undefined: the controller's own cluster. Otherwise the remote cluster these objects live in (spec.kubeConfig,
   * remote-clusters.ts), described for messages: its server and the Secret its kubeconfig came from.
   */
  readonly cluster: string | undefined;

  constructor(client: KubeClient, discovery: Discovery, identity?: string, cluster?: string) {
    this.client = client;
    this.discovery = discovery;
    this.identity = identity;
    this.cluster = cluster;
  }

  /**
   * The objects of one PackageSync, read and written as its ServiceAccount (in the PackageSync's namespace)
   * when it names one, else as the client's own identity; in this Objects' cluster (a remote one's Objects
   * comes from remote-clusters.ts, so the steps below never choose a cluster).
   */
  forPackage(owner: Owner, serviceAccount?: string): PackageObjects {
    // The last guard before a header: parseSpec and the controller's flags have checked both already (issue 35:
    // a name with CR/LF reached Impersonate-User)
    if (serviceAccount !== undefined) {
      assertValidName('name', serviceAccount, 'spec.serviceAccountName');
      assertValidName('namespace', owner.namespace, 'metadata.namespace');
    }
    const identity = serviceAccount ? `system:serviceaccount:${owner.namespace}:${serviceAccount}` : undefined;
    const view = new PackageObjects(this.client, this.discovery, owner, identity, this.cluster);
    view.ownWrites = this.ownWrites;
    if (!identity && !this.cluster) view.liveCache = this.liveCache;
    if (!identity) view.watches = this.watches;
    return view;
  }

  async mappingFor(group: string, kind: string, version?: string): Promise<Result<ResourceMapping>> {
    const m = await this.discovery.mapping(group, kind, version);
    if (m) return ok(m);
    const gk = group ? `${kind}.${group}` : kind;
    return fail(
      Reason.UnknownKind,
      `the cluster does not serve ${gk}${version ? ` (${version})` : ''}: install its CRD first, or add the CRD to the package`,
    );
  }

  /** Lists objects of one kind in one namespace ('' = cluster-scoped or all) matching a label selector. */
  async list(
    m: ResourceMapping,
    namespace: string,
    labelSelector: string,
    opts: ObjectsOptions = {},
  ): Promise<KubeObject[]> {
    const out: KubeObject[] = [];
    let cont: string | undefined;
    do {
      const page = await this.client.request<{ items: KubeObject[]; metadata: { continue?: string } }>(
        'GET',
        resourcePath(m, namespace || undefined),
        { query: { labelSelector, limit: 500, continue: cont }, impersonate: this.identity, signal: opts.signal },
      );
      const apiVersion = m.group ? `${m.group}/${m.version}` : m.version;
      for (const item of page.items) out.push({ ...item, apiVersion, kind: m.kind });
      cont = page.metadata.continue || undefined;
    } while (cont);
    return out;
  }

  async get(ref: ObjectRef, opts: ObjectsOptions = {}): Promise<KubeObject | undefined> {
    const m = await this.discovery.mapping(ref.group, ref.kind);
    if (!m) return undefined;
    if (scopeChanged(m, ref.namespace)) return undefined; // a namespaced object of a now cluster-scoped kind
    try {
      return await this.client.request<KubeObject>('GET', resourcePath(m, ref.namespace, ref.name), {
        impersonate: this.identity,
        signal: opts.signal,
      });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /**
   * A server-side apply that may only create (docs/adr/0029): the object as created, or undefined when it already
   * exists, in which case nothing was written to it. The body carries a resourceVersion no stored object has
   * (etcd's first write is revision 2): on create the API server ignores it, so the object and its managedFields
   * are exactly a plain apply's; on an existing object the precondition fails (409 Conflict) even with force.
   * A 409 can also be the field-manager conflict the apply meets first; either way the object exists.
   */
  async create(obj: KubeObject, opts: ObjectsOptions & { force?: boolean } = {}): Promise<KubeObject | undefined> {
    try {
      return (await this.apply(obj, { ...opts, createOnly: true })).object;
    } catch (e) {
      if (e instanceof ObjectExists) return undefined;
      throw e;
    }
  }

  /** One server-side apply request. Returns the object as the server stored it. */
  async apply(
    obj: KubeObject,
    opts: ObjectsOptions & { force?: boolean; dryRun?: boolean; createOnly?: boolean } = {},
  ): Promise<{ created: boolean; object: KubeObject }> {
    const mapped = await this.mappingFor(groupOf(obj.apiVersion), obj.kind, versionOf(obj.apiVersion));
    if (!mapped.ok) throw new KubeApiError(404, 'NotFound', mapped.failure.message);
    const m = mapped.value;
    // Render judged the scope (and the namespace policy what it may place) from discovery as it was then. A kind
    // that became cluster-scoped since must not be applied with its namespace silently dropped: for a tenant
    // that would be a cluster-scoped object the policy never saw. The next reconcile renders it as it is now.
    if (scopeChanged(m, obj.metadata.namespace)) {
      throw new KubeApiError(
        409,
        'Conflict',
        `the cluster serves ${obj.kind} cluster-scoped, but it was rendered as namespaced (in ` +
          `${obj.metadata.namespace}) when discovery did not know it yet; not applied, the next reconcile renders it again`,
      );
    }
    const done = opts.dryRun ? undefined : this.ownWrites?.begin(obj);
    try {
      const res = await this.client.requestWithStatus<KubeObject>(
        'PATCH',
        resourcePath(m, obj.metadata.namespace, obj.metadata.name),
        {
          query: {
            fieldManager: FIELD_MANAGER,
            force: opts.force ? true : undefined,
            dryRun: opts.dryRun ? 'All' : undefined,
          },
          contentType: 'application/apply-patch+yaml',
          body: opts.createOnly
            ? { ...obj, metadata: { ...obj.metadata, resourceVersion: CREATE_ONLY_RESOURCE_VERSION } }
            : obj,
          impersonate: this.identity,
          signal: opts.signal,
        },
      );
      if (!opts.dryRun) this.ownWrites?.record(res.body);
      return { created: res.status === 201, object: res.body };
    } catch (e) {
      if (opts.createOnly && isConflict(e)) throw new ObjectExists();
      throw e;
    } finally {
      done?.();
    }
  }

  /**
   * Deletes with Background propagation. `gone` when deleted or already absent; otherwise the object
   * stays, terminating, held by the finalizers named (a delete that succeeded but did not delete).
   */
  async delete(ref: ObjectRef, opts: ObjectsOptions & { uid?: string } = {}): Promise<DeleteOutcome> {
    const m = await this.discovery.mapping(ref.group, ref.kind);
    if (!m) return { gone: true }; // the kind is gone (its CRD was deleted): nothing left to delete
    // the kind is cluster-scoped now: the namespaced object the entry names is gone, and its cluster-scoped
    // namesake is not ours to delete
    if (scopeChanged(m, ref.namespace)) return { gone: true };
    // its watch event may come before this request's response: said before sending (drift-watch.ts)
    if (opts.uid) this.ownWrites?.deleting(opts.uid);
    try {
      const res = await this.client.request<KubeObject | { kind: 'Status' }>(
        'DELETE',
        resourcePath(m, ref.namespace, ref.name),
        {
          body: {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            propagationPolicy: 'Background',
            // never delete a newer object of the same name that someone created since we read it
            ...(opts.uid ? { preconditions: { uid: opts.uid } } : {}),
          },
          impersonate: this.identity,
          signal: opts.signal,
        },
      );
      // 200 with a Status: deleted now. 200 with the object: it stays until its finalizers are removed.
      const finalizers = (res as KubeObject | undefined)?.metadata?.finalizers;
      return Array.isArray(finalizers) && finalizers.length > 0
        ? { gone: false, finalizers: finalizers as string[] }
        : { gone: true };
    } catch (e) {
      if (opts.uid) this.ownWrites?.notDeleting(opts.uid);
      if (isNotFound(e)) return { gone: true };
      throw e;
    }
  }
}

/** One PackageSync's objects: the Objects view a reconcile (or `packagesync apply`) makes once, bound to its identity. */
export class PackageObjects extends Objects {
  readonly owner: Owner;

  constructor(client: KubeClient, discovery: Discovery, owner: Owner, identity?: string, cluster?: string) {
    super(client, discovery, identity, cluster);
    this.owner = owner;
  }

  /** Objects of one kind in one namespace ('' = cluster-scoped or all) that carry this package's owner labels. */
  listOwned(m: ResourceMapping, namespace: string, opts: ObjectsOptions = {}): Promise<KubeObject[]> {
    return this.list(m, namespace, ownerSelector(this.owner), opts);
  }
}

/** True when a ref or object names a namespace but the cluster serves its kind cluster-scoped. */
function scopeChanged(m: ResourceMapping, namespace: string | undefined): boolean {
  return !m.namespaced && namespace !== undefined && namespace !== '';
}

export type DeleteOutcome = { gone: true } | { gone: false; finalizers: string[] };
