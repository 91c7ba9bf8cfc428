/**
 * What the reconcile pipeline needs from the outside world. The controller wires the real adapters in;
 * the CLI wires the same ones. Nothing here decides anything.
 */
import type { Logger } from 'pino';
import type { KubeSecretRef, PackageSync, Status } from '../api/packagesync.ts';
import type { Result } from '../core/failure.ts';
import type { KubeObject, ObjectRef } from '../core/object.ts';
import type { Owner } from '../core/plan/ownership.ts';
import type { Change } from '../core/plan/changeset.ts';
import type { ResourceMapping } from '../adapters/kube/discovery.ts';
import type { LiveCache } from '../adapters/kube/live-cache.ts';
import type { DeleteOutcome, ObjectsOptions } from '../adapters/kube/objects.ts';
import type { WatchCache } from '../adapters/kube/watch-cache.ts';
import type { SourcePort } from '../adapters/git/source-port.ts';
import type { Renderer } from '../adapters/render/build.ts';
import type { Decryptor } from '../adapters/render/sops.ts';
import type { SettledCheckpoints } from './settled-checkpoints.ts';
import type { Tracing } from '../core/tracing.ts';

export type { FetchedSource, SourcePort } from '../adapters/git/source-port.ts';

/**
 * What the engine asks of the cluster's discovery (adapters/kube/discovery.ts Discovery): which kinds it serves,
 * and at which scope.
 */
export interface ClusterDiscovery {
  mapping(group: string, kind: string, version?: string): Promise<ResourceMapping | undefined>;
  /** undefined: a kind discovery does not know (yet). */
  isNamespaced(group: string, kind: string): boolean | undefined;
  listable(): Promise<ResourceMapping[]>;
  capabilities(): Promise<{ kubeVersion: string; apiVersions: string[] }>;
  /** Reads discovery again (a CRD established since it was read). */
  refresh(): Promise<void>;
}

/**
 * Reading, applying and deleting objects as one identity, in one cluster (adapters/kube/objects.ts Objects, whose
 * comments say what each does against the API server).
 */
export interface Objects {
  readonly discovery: ClusterDiscovery;
  /** The user every request impersonates; undefined: the controller's own. */
  readonly identity: string | undefined;
  /** The controller's shared watches for live reads; undefined: every read goes to the API server. */
  readonly liveCache: LiveCache | undefined;
  /** Undefined: the controller's own cluster; otherwise the remote cluster (spec.kubeConfig), for messages. */
  readonly cluster: string | undefined;
  /**
   * A remote cluster's shared watches for the health wait, as the identity these objects read as; undefined in
   * the controller's own cluster (Ports.watches) and wherever a wait polls.
   */
  readonly watches?: WatchCache | undefined;
  /** The objects of one PackageSync, read and written as its ServiceAccount when it names one. */
  forPackage(owner: Owner, serviceAccount?: string): PackageObjects;
  mappingFor(group: string, kind: string, version?: string): Promise<Result<ResourceMapping>>;
  list(m: ResourceMapping, namespace: string, labelSelector: string, opts?: ObjectsOptions): Promise<KubeObject[]>;
  get(ref: ObjectRef, opts?: ObjectsOptions): Promise<KubeObject | undefined>;
  /** A create-only apply: undefined when the object already exists (nothing written to it). */
  create(obj: KubeObject, opts?: ObjectsOptions & { force?: boolean }): Promise<KubeObject | undefined>;
  apply(
    obj: KubeObject,
    opts?: ObjectsOptions & { force?: boolean; dryRun?: boolean; createOnly?: boolean },
  ): Promise<{ created: boolean; object: KubeObject }>;
  delete(ref: ObjectRef, opts?: ObjectsOptions & { uid?: string }): Promise<DeleteOutcome>;
}

/** One PackageSync's objects: the view a reconcile makes once (`forPackage`), bound to its identity. */
export interface PackageObjects extends Objects {
  readonly owner: Owner;
  /** Objects of one kind in one namespace ('' = cluster-scoped or all) that carry this package's owner labels. */
  listOwned(m: ResourceMapping, namespace: string, opts?: ObjectsOptions): Promise<KubeObject[]>;
}

/** The PackageSyncs themselves: reads, status and finalizer writes, events (adapters/kube/packagesyncs.ts). */
export interface PackageSyncs {
  /** With its whole inventory, wherever it is stored (inline or in shards); undefined when it does not exist. */
  get(namespace: string, name: string): Promise<PackageSync | undefined>;
  /** As stored: a spilled inventory's entries are empty (enough for conditions, spec, metadata). */
  getStored(namespace: string, name: string): Promise<PackageSync | undefined>;
  /** The stored object as a watch holds it now, shared, when known current; undefined otherwise (no request). */
  peekStored(namespace: string, name: string): Readonly<PackageSync> | undefined;
  /** Writes status; undefined when the PackageSync is gone. */
  writeStatus(ps: PackageSync, status: Status): Promise<PackageSync | undefined>;
  setFinalizer(ps: PackageSync, finalizer: string, present: boolean): Promise<PackageSync | undefined>;
  event(ps: PackageSync, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
}

export interface SecretsPort {
  /** The Secret's data, decoded; undefined when it does not exist. */
  read(namespace: string, name: string): Promise<Record<string, string> | undefined>;
}

export interface ConfigMapsPort {
  /** The ConfigMap's data; undefined when it does not exist. */
  read(namespace: string, name: string): Promise<Record<string, string> | undefined>;
}

/** Remote clusters named by spec.kubeConfig (adapters/kube/remote-clusters.ts). */
export interface ClustersPort {
  /** The Objects of the cluster the kubeconfig in Secret `namespace/ref.name` names, reachable now. */
  objectsFor(namespace: string, ref: KubeSecretRef, signal?: AbortSignal): Promise<Result<Objects>>;
}

export interface Ports {
  objects: Objects;
  /** Remote clusters (spec.kubeConfig); absent: a PackageSync that names one fails with KubeConfigInvalid. */
  clusters?: ClustersPort;
  packageSyncs: PackageSyncs;
  source: SourcePort;
  secrets: SecretsPort;
  /** postBuild.substituteFrom ConfigMaps (Secrets come through `secrets`). */
  configMaps: ConfigMapsPort;
  log: Logger;
  /** Builds kustomize and Helm packages (absent: plain files only, e.g. in tests that need no tools). */
  render?: Renderer;
  /** spec.decryption: the upstream sops binary (absent: an encrypted object fails DecryptionFailed). */
  decryptor?: Decryptor;
  /** The controller-wide age keys (--sops-age-secret): spec.decryption without a secretRef uses them, as Flux. */
  sopsAgeSecret?: { namespace: string; name: string };
  /** Shared watches for the health wait (the controller); absent = the wait polls with LISTs (the CLI). */
  watches?: WatchCache;
  /** Settled checks' checkpoints (settled-checkpoints.ts, ADR 0031): the controller's; absent in the CLI. */
  checkpoints?: SettledCheckpoints;
  /** OpenTelemetry: a trace per reconcile (--otlp-traces-endpoint); absent: no tracing. */
  tracing?: Tracing;
  /** Metrics hooks; no-ops in the CLI. */
  observe?: {
    applied?(n: number): void;
    pruned?(n: number): void;
    /** Objects re-applied at a revision already applied: someone changed them in the cluster (drift). */
    driftCorrected?(n: number): void;
    /**
     * A periodic check found nothing changed since its package was last found settled (ADR 0031), and stopped
     * before loading its PackageSync (unchanged-check.ts) or before rendering.
     */
    unchangedCheck?(stopped: 'before-load' | 'before-render'): void;
    /** One round of a health wait: its objects (and the children of workloads not Current) read and judged. */
    healthRound?(): void;
    /**
     * What one reconcile's apply and prune did, object by object (after the apply, failed or not): the pull
     * request comments' action list (docs/adr/0043). Refs and actions only are read from it.
     */
    changes?(ps: { namespace: string; name: string; uid: string }, revision: string, changes: readonly Change[]): void;
  };
}

export type { ReconcileTrace, TracedStep, Tracing } from '../core/tracing.ts';
export { NO_TRACE } from '../core/tracing.ts';
