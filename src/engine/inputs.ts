/**
 * The Inputs step: everything a reconcile reads that could change what it renders, applies or reports, read with
 * the identity allowed to read it, returned as one value with one digest (the list and the digest:
 * src/core/inputs.ts; docs/adr/0037-one-inputs-step-and-one-exit.md).
 *
 * Every shortcut is keyed by that digest: the check before loading reads the same inputs again (`digestAgain`,
 * without fetching) and compares it; the settled checkpoint sums it with the live copies it judged; the render
 * cache is keyed by it. The revision a run reports is the one its Inputs worked out (package-revision.ts).
 */
import { randomUUID } from 'node:crypto';
import type { PackageSync, Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import type { BuildTool } from '../adapters/render/build.ts';
import type { HelmCapabilities } from '../adapters/render/helm.ts';
import { fail, ok, type Result } from '../core/failure.ts';
import { inputsDigest, valueDigest, type ReconcileInputs } from '../core/inputs.ts';
import type { Substitution } from '../core/render/index.ts';
import { packageRevision } from './package-revision.ts';
import type { FetchedSource, PackageObjects, Ports } from './ports.ts';
import { readCredentials } from './source-credentials.ts';
import { readSubstitution } from './substitution-inputs.ts';
import type { HeldSource } from './settled-checkpoints.ts';
import { verifyStep } from './verify-step.ts';

/** A Helm package's inputs besides its chart: spec.helm.valuesFrom's contents, in order, and the capabilities. */
export interface HelmInputs {
  valuesFrom: string[];
  capabilities: HelmCapabilities;
}

/** One reconcile's inputs, read. */
export interface Inputs {
  /** Every input, as core/inputs.ts lists them (secret values as digests). */
  record: ReconcileInputs;
  /** The digest of `record`: the key of every shortcut. */
  digest: string;
  /** The revision this run works on and reports. */
  revision: string;
  /** What the package reads in the commit (pathRevision), or the commit. */
  content: string;
  credentials: Record<string, string> | undefined;
  /** The source, fetched (its files read only when the run renders: `readFiles`). */
  fetched: FetchedSource;
  substitution: Substitution | undefined;
  tool: BuildTool;
  helm: HelmInputs | undefined;
}

/** What reading the inputs needs to know of the run. */
export interface InputsContext {
  ps: Readonly<PackageSync>;
  spec: Spec;
  /** The run's view of the cluster, as its identity (Helm valuesFrom ConfigMaps are read with it). */
  objects: PackageObjects;
  ports: Ports;
  /** The ServiceAccount the run acts as (spec.serviceAccountName or the controller's default). */
  serviceAccount: string | undefined;
  strictSubstitutions: boolean;
  signal: AbortSignal;
  /** Told the revision as soon as it is known, so a failure after it (verify, variables) names it. */
  resolved(revision: string): void;
}

/** Reads every input of the run: the source fetched (files deferred), verified, and what the render reads. */
export async function readInputs(c: InputsContext): Promise<Result<Inputs>> {
  const { ps, spec, ports, signal } = c;
  const namespace = ps.metadata.namespace;
  const credentials = await readCredentials(ps as PackageSync, spec, ports);
  if (!credentials.ok) return credentials;
  // the package's files are read only if the run renders (a settled check may stop before: ADR 0031)
  const fetched = await ports.source.fetch(spec.source, credentials.value, signal, { deferFiles: true });
  if (!fetched.ok) return fetched;
  // a commit that touched nothing the package reads keeps the revision applied (package-revision.ts)
  const revision = await packageRevision(ps as PackageSync, fetched.value);
  c.resolved(revision);
  // spec.source.verify: an unsigned or wrongly signed commit goes no further (engine/verify-step.ts)
  const verified = await verifyStep(ports, namespace, spec.source, fetched.value, credentials.value, signal);
  if (!verified.ok) return verified;
  const substitution = await readSubstitution(namespace, spec.postBuild, ports, c.strictSubstitutions);
  if (!substitution.ok) return substitution;
  const { checkoutRoot, packagePath } = fetched.value;
  const tool = ports.render ? await ports.render.toolFor(checkoutRoot, packagePath, spec) : 'plain';
  const helm = tool === 'helm' ? await readHelmInputs(ports, c.objects, spec, namespace) : ok(undefined);
  if (!helm.ok) return helm;
  const source = { content: fetched.value.pathRevision ?? fetched.value.commit, revision, tool };
  const read = { credentials: credentials.value, substitution: substitution.value, helm: helm.value };
  const record = recordOf(c, source, read, await decryptionKeysDigest(c));
  return ok({ record, digest: inputsDigest(record), fetched: fetched.value, ...source, ...read });
}

/**
 * The inputs' digest read again the cheap way, for the check before loading (unchanged-check.ts): the ref
 * resolved without fetching; a commit other than `held.commit` (or anything unreadable) is undefined, and the
 * full check decides. The same commit reads as the same content, revision and tool (git is content-addressed).
 */
export async function digestAgain(
  c: Omit<InputsContext, 'resolved' | 'objects'> & {
    /** The run's view, made only for a Helm package (its valuesFrom): a periodic check of the others never needs it. */
    objects: () => PackageObjects;
  },
  held: HeldSource,
): Promise<{ digest: string; source: HeldSource } | undefined> {
  const { ps, spec, ports, signal } = c;
  const credentials = await readCredentials(ps as PackageSync, spec, ports);
  if (!credentials.ok || !ports.source.resolve) return undefined;
  const commit = await ports.source.resolve(spec.source, credentials.value, signal);
  if (!commit.ok || commit.value !== held.commit) return undefined;
  const substitution = await readSubstitution(ps.metadata.namespace, spec.postBuild, ports, c.strictSubstitutions);
  if (!substitution.ok) return undefined;
  const helm =
    held.tool === 'helm' ? await readHelmInputs(ports, c.objects(), spec, ps.metadata.namespace) : ok(undefined);
  if (!helm.ok) return undefined;
  const read = { credentials: credentials.value, substitution: substitution.value, helm: helm.value };
  const record = recordOf(c, held, read, await decryptionKeysDigest(c));
  return { digest: inputsDigest(record), source: held };
}

/** The one place the inputs become the record the digest is taken of. */
function recordOf(
  c: Pick<InputsContext, 'ps' | 'spec' | 'serviceAccount'>,
  source: Pick<HeldSource, 'content' | 'revision' | 'tool'>,
  read: Pick<Inputs, 'credentials' | 'substitution' | 'helm'>,
  decryption: string | null,
): ReconcileInputs {
  const { namespace, name, uid, generation } = c.ps.metadata;
  return {
    packageSync: { namespace, name, uid: uid ?? '' },
    generation: generation ?? 0,
    identity: { serviceAccount: c.serviceAccount ?? null, kubeConfig: c.spec.kubeConfig?.secretRef?.name ?? null },
    credentials: read.credentials === undefined ? null : valueDigest(read.credentials),
    content: source.content,
    revision: source.revision,
    substitution: read.substitution === undefined ? null : valueDigest(read.substitution),
    decryption,
    tool: source.tool,
    helm: read.helm
      ? {
          valuesFrom: valueDigest(read.helm.valuesFrom),
          kubeVersion: read.helm.capabilities.kubeVersion,
          apiVersions: read.helm.capabilities.apiVersions,
          ...(c.spec.helm?.lookup ? { lookup: randomUUID() } : {}),
        }
      : null,
  };
}

/**
 * spec.decryption's keys, as a digest: its Secret, or the controller's --sops-age-secret. Only read here for the
 * digest; the render reads and checks them when it needs them (decrypt-step.ts), so a missing Secret is a digest
 * too, not a failure.
 */
async function decryptionKeysDigest(c: Pick<InputsContext, 'ps' | 'spec' | 'ports'>): Promise<string | null> {
  const decryption = c.spec.decryption;
  if (!decryption) return null;
  const ref = decryption.secretRef
    ? { namespace: c.ps.metadata.namespace, name: decryption.secretRef.name }
    : c.ports.sopsAgeSecret;
  if (!ref) return valueDigest(null);
  return valueDigest((await c.ports.secrets.read(ref.namespace, ref.name)) ?? null);
}

/**
 * spec.helm.valuesFrom, read from the PackageSync's own namespace: Secrets as the git credentials are read,
 * ConfigMaps as the PackageSync's identity; and the cluster's capabilities. Messages name the object and key,
 * never a value.
 */
export async function readHelmInputs(
  ports: Pick<Ports, 'secrets' | 'configMaps'>,
  objects: PackageObjects,
  spec: Spec,
  namespace: string,
): Promise<Result<HelmInputs>> {
  const valuesFrom: string[] = [];
  for (const ref of spec.helm?.valuesFrom ?? []) {
    const named = `${ref.kind} ${namespace}/${ref.name}`;
    let data: Record<string, string> | undefined;
    if (ref.kind === 'Secret') {
      data = await ports.secrets.read(namespace, ref.name);
    } else {
      // the PackageSync's namespace is in this cluster, not in a remote one spec.kubeConfig names
      if (objects.cluster) data = await ports.configMaps.read(namespace, ref.name);
      else {
        const cm = await objects.get({ group: '', kind: 'ConfigMap', namespace, name: ref.name });
        data = cm ? ((cm.data as Record<string, string> | undefined) ?? {}) : undefined;
      }
    }
    if (data === undefined) {
      if (ref.optional) continue;
      return fail(
        Reason.RenderFailed,
        `${named} named in spec.helm.valuesFrom does not exist; create it or mark the entry optional`,
      );
    }
    const text = data[ref.valuesKey];
    if (text === undefined) {
      if (ref.optional) continue;
      return fail(
        Reason.RenderFailed,
        `${named} named in spec.helm.valuesFrom has no key ${JSON.stringify(ref.valuesKey)}; add it or set valuesKey`,
      );
    }
    valuesFrom.push(text);
  }
  return ok({ valuesFrom, capabilities: await objects.discovery.capabilities() });
}
