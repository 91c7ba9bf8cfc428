/**
 * Reading, applying and deleting package objects. Every call can act as a tenant's ServiceAccount
 * (impersonation), so the API server's RBAC decides what a PackageSync may touch.
 */
import { FIELD_MANAGER } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import type { Failure } from '../../core/failure.ts';
import { describeRef, groupOf, refOf, versionOf, type KubeObject, type ObjectRef } from '../../core/object.ts';
import { KubeApiError, isNotFound, type KubeClient } from './client.ts';
import { resourcePath, type Discovery, type ResourceMapping } from './discovery.ts';

export interface ObjectsOptions {
  impersonate?: string;
  signal?: AbortSignal;
}

export class Objects {
  private readonly client: KubeClient;
  readonly discovery: Discovery;

  constructor(client: KubeClient, discovery: Discovery) {
    this.client = client;
    this.discovery = discovery;
  }

  async mappingFor(group: string, kind: string, version?: string): Promise<ResourceMapping | Failure> {
    const m = await this.discovery.mapping(group, kind, version);
    if (m) return m;
    const gk = group ? `${kind}.${group}` : kind;
    return {
      reason: Reason.UnknownKind,
      message: `the cluster does not serve ${gk}${version ? ` (${version})` : ''}: install its CRD first, or add the CRD to the package`,
      terminal: false,
    };
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
        { query: { labelSelector, limit: 500, continue: cont }, impersonate: opts.impersonate, signal: opts.signal },
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
    try {
      return await this.client.request<KubeObject>('GET', resourcePath(m, ref.namespace, ref.name), {
        impersonate: opts.impersonate,
        signal: opts.signal,
      });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  /** One server-side apply request. Returns the object as the server stored it. */
  async apply(
    obj: KubeObject,
    opts: ObjectsOptions & { force?: boolean; dryRun?: boolean } = {},
  ): Promise<{ created: boolean; object: KubeObject }> {
    const m = await this.mappingFor(groupOf(obj.apiVersion), obj.kind, versionOf(obj.apiVersion));
    if ('reason' in m) throw new KubeApiError(404, 'NotFound', m.message);
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
        body: obj,
        impersonate: opts.impersonate,
        signal: opts.signal,
      },
    );
    return { created: res.status === 201, object: res.body };
  }

  /** Deletes with Background propagation; true when deleted or already gone. */
  async delete(ref: ObjectRef, opts: ObjectsOptions & { uid?: string } = {}): Promise<void> {
    const m = await this.discovery.mapping(ref.group, ref.kind);
    if (!m) return; // the kind is gone (its CRD was deleted): nothing left to delete
    try {
      await this.client.request('DELETE', resourcePath(m, ref.namespace, ref.name), {
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          propagationPolicy: 'Background',
          // never delete a newer object of the same name that someone created since we read it
          ...(opts.uid ? { preconditions: { uid: opts.uid } } : {}),
        },
        impersonate: opts.impersonate,
        signal: opts.signal,
      });
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
  }
}

/** Turns an API error on an object into a Failure a user can act on. */
export function applyFailure(obj: KubeObject, e: unknown, verb: 'apply' | 'delete' = 'apply'): Failure {
  const ref = refOf(obj);
  const what = describeRef(ref);
  if (!(e instanceof KubeApiError)) {
    return {
      reason: Reason.ApplyFailed,
      message: `${verb} ${what}: ${(e as Error).message ?? String(e)}`,
      object: ref,
      terminal: false,
    };
  }
  if (e.status === 409 && verb === 'apply') {
    return {
      reason: Reason.ApplyConflict,
      message: `${what}: ${conflictSummary(e.message)}; remove the field from the package, let ${FIELD_MANAGER} own it (kubectl apply --server-side --field-manager=${FIELD_MANAGER}), or set spec.force: true`,
      object: ref,
      terminal: false,
    };
  }
  if (e.status === 422 && /immutable/i.test(e.message)) {
    return {
      reason: Reason.ImmutableFieldChange,
      message: `${what}: ${trimMessage(e.message)}; set spec.force: true to delete and recreate it`,
      object: ref,
      terminal: false,
    };
  }
  if (e.status === 403) {
    return {
      reason: Reason.Forbidden,
      message: `${verb} ${what}: forbidden: ${trimMessage(e.message)}`,
      object: ref,
      terminal: false,
    };
  }
  if (e.status === 404 && verb === 'apply') {
    return { reason: Reason.UnknownKind, message: `${what}: ${trimMessage(e.message)}`, object: ref, terminal: false };
  }
  return {
    reason: verb === 'apply' ? Reason.ApplyFailed : Reason.PruneFailed,
    message: `${verb} ${what}: ${trimMessage(e.message)}`,
    object: ref,
    terminal: false,
  };
}

function conflictSummary(message: string): string {
  // "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using v1: .data.key"
  const m = /conflicts? with (.*)$/s.exec(message);
  return m ? `field conflict with ${trimMessage(m[1]!)}` : trimMessage(message);
}

function trimMessage(message: string): string {
  return message.length > 400 ? `${message.slice(0, 400)}…` : message;
}
