/**
 * The generator: registered clusters (kubeconfig Secrets of the set's own namespace) × optional directories →
 * targets, each with the deterministic name of the PackageSync stamped for it (docs/adr/0042).
 */
import { createHash } from 'node:crypto';
import { CLUSTER_SECRET_LABEL, CLUSTER_SECRET_VALUE, type LabelSelector } from '../../api/packagesyncset.ts';
import { matchesSelector } from './selector.ts';

/** A Secret as the generator sees it: its name and labels, never its data. */
export interface ClusterSecret {
  name: string;
  namespace: string;
  labels: Readonly<Record<string, string>>;
}

export interface Target {
  /** `cluster`, or `cluster/directory`: unique within the set, the key of everything else. */
  name: string;
  cluster: string;
  directory?: string;
  /** The child PackageSync's name. */
  child: string;
  /** The cluster Secret's labels: what wave selectors read. */
  labels: Readonly<Record<string, string>>;
}

const MAX_NAME = 253;
const shortHash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 8);

function slug(path: string): string {
  const s = path
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return s || 'root';
}

/**
 * `<set>-<cluster>`, or `<set>-<cluster>-<dir-slug>-<hash>` for a directory (slugs of "a/b" and "a-b" agree; the
 * hash of the exact path keeps them apart). Past 253 characters the tail is replaced by a hash of the whole.
 */
export function childName(set: string, cluster: string, directory?: string): string {
  const base =
    directory === undefined ? `${set}-${cluster}` : `${set}-${cluster}-${slug(directory)}-${shortHash(directory)}`;
  if (base.length <= MAX_NAME) return base;
  return `${base.slice(0, MAX_NAME - 9).replace(/[-.]+$/, '')}-${shortHash(base)}`;
}

/** A label value (at most 63 characters) naming the set on its children. */
export function setLabelValue(set: string): string {
  return set.length <= 63 ? set : `${set.slice(0, 54).replace(/[-.]+$/, '')}-${shortHash(set)}`;
}

export function isRegisteredCluster(secret: ClusterSecret): boolean {
  return secret.labels[CLUSTER_SECRET_LABEL] === CLUSTER_SECRET_VALUE;
}

/**
 * Targets, sorted by name. Only Secrets of `namespace` count, whatever the caller listed: a tenant's set can never
 * reach a cluster registered in another namespace, even if a caller passed a cluster-wide list by mistake.
 */
export function generateTargets(
  set: { name: string; namespace: string },
  secrets: readonly ClusterSecret[],
  selector: LabelSelector | undefined,
  directories?: readonly string[],
): Target[] {
  const clusters = secrets
    .filter((s) => s.namespace === set.namespace && isRegisteredCluster(s) && matchesSelector(selector, s.labels))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const dirs = directories && directories.length > 0 ? [...new Set(directories)] : [undefined];
  const out: Target[] = [];
  for (const c of clusters)
    for (const d of dirs)
      out.push({
        name: d === undefined ? c.name : `${c.name}/${d}`,
        cluster: c.name,
        ...(d === undefined ? {} : { directory: d }),
        child: childName(set.name, c.name, d),
        labels: c.labels,
      });
  return out;
}
