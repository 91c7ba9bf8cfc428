/**
 * What the reconcile pipeline needs from the outside world. The controller wires the real adapters in;
 * the CLI wires the same ones. Nothing here decides anything.
 */
import type { Logger } from 'pino';
import type { KubeSecretRef } from '../api/packagesync.ts';
import type { Result } from '../core/failure.ts';
import type { Objects } from '../adapters/kube/objects.ts';
import type { WatchCache } from '../adapters/kube/watch-cache.ts';
import type { PackageSyncs } from '../adapters/kube/packagesyncs.ts';
import type { SourcePort } from '../adapters/git/source-port.ts';
import type { Renderer } from '../adapters/render/build.ts';
import type { Decryptor } from '../adapters/render/sops.ts';
import type { SettledCheckpoints } from './settled-checkpoints.ts';

export type { FetchedSource, SourcePort } from '../adapters/git/source-port.ts';

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
  };
}
