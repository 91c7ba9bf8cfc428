/**
 * Which ConfigMaps and Secrets each PackageSync reads (spec.source.secretRef, spec.postBuild.substituteFrom,
 * spec.kubeConfig.secretRef),
 * indexed both ways so that a change to one finds its PackageSyncs without scanning the fleet. Pure data.
 */
import type { PackageSync } from '../api/packagesync.ts';

export type ConfigKind = 'ConfigMap' | 'Secret';

/** `Kind/namespace/name` of a ConfigMap or Secret. */
export const configKey = (kind: ConfigKind, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

/**
 * The objects a PackageSync reads, as config keys. Read from the raw spec (not yet validated): a malformed
 * entry is skipped here and reported by the reconcile.
 */
export function referencesOf(ps: PackageSync): string[] {
  const ns = ps.metadata.namespace;
  const spec = (ps.spec ?? {}) as {
    source?: { secretRef?: { name?: unknown } };
    postBuild?: { substituteFrom?: unknown };
    kubeConfig?: { secretRef?: { name?: unknown } };
  };
  const keys = new Set<string>();
  const secret = spec.source?.secretRef?.name;
  if (typeof secret === 'string' && secret) keys.add(configKey('Secret', ns, secret));
  const kubeConfig = spec.kubeConfig?.secretRef?.name;
  if (typeof kubeConfig === 'string' && kubeConfig) keys.add(configKey('Secret', ns, kubeConfig));
  const from = spec.postBuild?.substituteFrom;
  if (Array.isArray(from)) {
    for (const ref of from as { kind?: unknown; name?: unknown }[]) {
      if ((ref?.kind === 'ConfigMap' || ref?.kind === 'Secret') && typeof ref.name === 'string' && ref.name) {
        keys.add(configKey(ref.kind, ns, ref.name));
      }
    }
  }
  return [...keys];
}

export class ConfigReferences {
  /** config key → PackageSync keys (`namespace/name`) that read it. */
  private readonly readers = new Map<string, Set<string>>();
  /** PackageSync key → the config keys it reads. */
  private readonly reads = new Map<string, string[]>();

  /** Records what this PackageSync reads now, replacing what it read before. */
  set(psKey: string, configKeys: readonly string[]): void {
    this.remove(psKey);
    if (configKeys.length === 0) return;
    this.reads.set(psKey, [...configKeys]);
    for (const key of configKeys) {
      let set = this.readers.get(key);
      if (!set) this.readers.set(key, (set = new Set()));
      set.add(psKey);
    }
  }

  remove(psKey: string): void {
    for (const key of this.reads.get(psKey) ?? []) {
      const set = this.readers.get(key);
      set?.delete(psKey);
      if (set?.size === 0) this.readers.delete(key);
    }
    this.reads.delete(psKey);
  }

  /** The PackageSyncs that read this ConfigMap or Secret. */
  readersOf(configKey: string): string[] {
    return [...(this.readers.get(configKey) ?? [])];
  }

  /** How many ConfigMaps and Secrets are referenced at all (for logs and tests). */
  get size(): number {
    return this.readers.size;
  }
}
