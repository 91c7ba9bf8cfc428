/**
 * Which ConfigMaps and Secrets each PackageSync reads — every one its spec names: spec.source.secretRef,
 * spec.source.oci.secretRef and .certSecretRef, spec.source.verify.secretRef, spec.postBuild.substituteFrom,
 * spec.source.dependencyRepositories[].secretRef, spec.helm.valuesFrom, spec.decryption.secretRef, spec.kubeConfig.secretRef — indexed both ways so that a
 * change to one finds its PackageSyncs without scanning the fleet. Pure data. (Not here: the controller-wide
 * --sops-age-secret, and the webhook token Secret, which authenticates a call and changes no render.)
 */
import type { PackageSync } from '../api/packagesync.ts';

export type ConfigKind = 'ConfigMap' | 'Secret';

/** `Kind/namespace/name` of a ConfigMap or Secret. */
export const configKey = (kind: ConfigKind, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

type NamedRef = { name?: unknown } | undefined;
type KindRef = { kind?: unknown; name?: unknown } | null | undefined;

/**
 * The objects a PackageSync reads, as config keys. Read from the raw spec (not yet validated): a malformed
 * entry is skipped here and reported by the reconcile.
 */
export function referencesOf(ps: PackageSync): string[] {
  const ns = ps.metadata.namespace;
  const spec = (ps.spec ?? {}) as {
    source?: {
      secretRef?: NamedRef;
      oci?: { secretRef?: NamedRef; certSecretRef?: NamedRef };
      chart?: {
        secretRef?: NamedRef;
        certSecretRef?: NamedRef;
        values?: { secretRef?: NamedRef };
        verify?: { secretRef?: NamedRef };
      };
      verify?: { secretRef?: NamedRef };
      dependencyRepositories?: unknown;
    };
    postBuild?: { substituteFrom?: unknown };
    helm?: { valuesFrom?: unknown };
    decryption?: { secretRef?: NamedRef };
    kubeConfig?: { secretRef?: NamedRef };
  };
  const keys = new Set<string>();
  const secret = (ref: NamedRef) => {
    const name = ref?.name;
    if (typeof name === 'string' && name) keys.add(configKey('Secret', ns, name));
  };
  const either = (refs: unknown) => {
    if (!Array.isArray(refs)) return;
    for (const ref of refs as KindRef[]) {
      if ((ref?.kind === 'ConfigMap' || ref?.kind === 'Secret') && typeof ref.name === 'string' && ref.name) {
        keys.add(configKey(ref.kind, ns, ref.name));
      }
    }
  };
  secret(spec.source?.secretRef);
  secret(spec.source?.oci?.secretRef);
  secret(spec.source?.oci?.certSecretRef);
  secret(spec.source?.chart?.secretRef);
  secret(spec.source?.chart?.certSecretRef);
  secret(spec.source?.chart?.values?.secretRef);
  secret(spec.source?.chart?.verify?.secretRef);
  secret(spec.source?.verify?.secretRef);
  const dependencyRepositories = spec.source?.dependencyRepositories;
  if (Array.isArray(dependencyRepositories))
    for (const entry of dependencyRepositories as { secretRef?: NamedRef }[]) secret(entry?.secretRef);
  secret(spec.kubeConfig?.secretRef);
  either(spec.postBuild?.substituteFrom);
  either(spec.helm?.valuesFrom);
  secret(spec.decryption?.secretRef);
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
