/**
 * What the reconcile pipeline needs from the outside world. The controller wires the real adapters in;
 * the CLI wires the same ones. Nothing here decides anything.
 */
import type { Logger } from 'pino';
import type { Objects } from '../adapters/kube/objects.ts';
import type { WatchCache } from '../adapters/kube/watch-cache.ts';
import type { PackageSyncs } from '../adapters/kube/packagesyncs.ts';
import type { Result } from '../core/failure.ts';
import type { SourceFile } from '../core/render/types.ts';
import type { Spec } from '../api/packagesync.ts';
import type { Renderer } from '../adapters/render/build.ts';

export interface FetchedSource {
  /** e.g. main@sha1:3f2a… */
  revision: string;
  commit: string;
  /** The package's manifest files (what a plain package renders). */
  files: SourceFile[];
  /** The read-only checkout of the commit, for tools that read more than the package (kustomize bases, charts). */
  checkoutRoot: string;
  /** The package's path inside the checkout, validated: "." or a relative path. */
  packagePath: string;
}

export interface SourcePort {
  /**
   * Resolves the ref to a commit, fetches it (from cache when unchanged) and reads the package files.
   * `credentials` comes from the PackageSync's own namespace; the source never falls back to others.
   */
  fetch(
    source: Spec['source'],
    credentials: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<Result<FetchedSource>>;
  /** Forgets what it recently learnt about this URL's refs: the next fetch asks the git server. */
  forget?(url: string): void;
}

export interface SecretsPort {
  /** The Secret's data, decoded; undefined when it does not exist. */
  read(namespace: string, name: string): Promise<Record<string, string> | undefined>;
}

export interface Ports {
  objects: Objects;
  packageSyncs: PackageSyncs;
  source: SourcePort;
  secrets: SecretsPort;
  log: Logger;
  /** Builds kustomize and Helm packages (absent: plain files only, e.g. in tests that need no tools). */
  render?: Renderer;
  /** Shared watches for the health wait (the controller); absent = the wait polls with LISTs (the CLI). */
  watches?: WatchCache;
  /** Metrics hooks; no-ops in the CLI. */
  observe?: {
    applied?(n: number): void;
    pruned?(n: number): void;
  };
}
