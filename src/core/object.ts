/** A Kubernetes object as plain JSON data: what the package renders and what the API server returns. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  generation?: number;
  resourceVersion?: string;
  uid?: string;
  deletionTimestamp?: string;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  [field: string]: unknown;
}

/** Identifies one object across versions: group, kind, namespace ('' when cluster-scoped), name. */
export interface ObjectRef {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export function versionOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
}

export function refOf(obj: KubeObject): ObjectRef {
  return {
    group: groupOf(obj.apiVersion),
    kind: obj.kind,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name,
  };
}

/** A stable string key for maps: `group/kind/namespace/name`. */
export function refKey(ref: ObjectRef): string {
  return `${ref.group}/${ref.kind}/${ref.namespace}/${ref.name}`;
}

/** How people read an object in messages: `Deployment/team-a/web`, `Namespace/team-a`. */
export function describeRef(ref: ObjectRef): string {
  // Built-in groups (apps, batch, *.k8s.io) go unnamed, as kubectl shows them; custom groups are named.
  const kind = ref.group.includes('.') && !ref.group.endsWith('.k8s.io') ? `${ref.kind}.${ref.group}` : ref.kind;
  return ref.namespace ? `${kind}/${ref.namespace}/${ref.name}` : `${kind}/${ref.name}`;
}

/** A JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads own properties only: a `__proto__` or `constructor` key in the data must never reach the prototype. */
export function ownField(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
