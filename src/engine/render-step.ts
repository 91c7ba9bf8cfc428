/**
 * Pipeline step 3, render: build (plain files | kustomize | helm template, adapters/render) → pure steps on
 * the built objects → normalise (namespaces, owner labels, duplicates: core/render, via package-plan.ts,
 * shared with the CLI). The pure steps on the built objects run in this order: postBuild substitution
 * (when the spec asks for it), then Flux's commonMetadata.
 */
import type { Spec } from '../api/packagesync.ts';
import type { Built, BuildTool } from '../adapters/render/build.ts';
import { ok, type Result } from '../core/failure.ts';
import { withCommonMetadata } from '../core/render/built.ts';
import { plainPackage, readObjects, type RenderedPackage, type Substitution } from '../core/render/index.ts';
import type { LocatedObject } from '../core/render/manifests.ts';
import { substitutionStep } from '../core/render/substitute.ts';
import { cipherDigest, decryptionKeys, decryptObjects, holdsEncrypted } from './decrypt-step.ts';
import { helmLookup } from './helm-lookup.ts';
import { readHelmInputs, type HelmInputs } from './inputs.ts';
import { renderBuiltForCluster } from './package-plan.ts';
import type { FetchedSource, PackageObjects, Ports } from './ports.ts';

export interface RenderStepInput {
  source: FetchedSource;
  spec: Spec;
  owner: { name: string; namespace: string };
  /** The run's view of the cluster, as the PackageSync's identity (valuesFrom ConfigMaps are read with it). */
  objects: PackageObjects;
  /** spec.postBuild, its variables read (engine/substitution-inputs.ts); undefined: no substitution. */
  substitution?: Substitution;
  /** A Helm package's valuesFrom and capabilities, as the Inputs step read them; absent: read here (the CLI). */
  helm?: HelmInputs;
  /** The reconcile's Inputs digest (engine/inputs.ts): the render cache's key. */
  inputsDigest?: string;
  signal: AbortSignal;
}

/** The rendered package, and which build produced it (later failures of a built package name its files). */
export type RenderedStep = RenderedPackage & { tool: BuildTool };

export async function renderStep(ports: Ports, input: RenderStepInput): Promise<Result<RenderedStep>> {
  const { spec, owner } = input;
  // the decryption keys are read once, when first needed: by the build (an encrypted kustomize source) or
  // after it (an encrypted object); a package with nothing encrypted never reads them
  const decryption = spec.decryption;
  const keys = decryption
    ? once(() => decryptionKeys(ports.secrets, owner.namespace, decryption, ports.sopsAgeSecret))
    : undefined;
  // with spec.decryption, substitution runs after decryption (as Flux's), so it is held back from the build
  const built = await buildObjects(ports, spec.decryption ? { ...input, substitution: undefined } : input, keys);
  if (!built.ok) return built;
  const decrypted = await decryptStep(ports, input, built.value, keys);
  if (!decrypted.ok) return decrypted;
  const objects = withCommonMetadata(decrypted.value, spec.kustomize?.commonMetadata);
  const rendered = await renderBuiltForCluster(
    { objects, what: built.value.what },
    {
      owner,
      defaultNamespace: owner.namespace,
      targetNamespace: spec.targetNamespace,
      allowEmpty: spec.allowEmpty,
    },
    input.objects.discovery,
  );
  if (!rendered.ok) return rendered;
  const digest =
    decrypted.value === built.value.objects && !built.value.decryptedSources
      ? rendered.value.digest
      : cipherDigest(built.value.objects, rendered.value.objects, built.value.decryptedSources?.cipherDigest);
  return ok({ ...rendered.value, digest, tool: built.value.tool });
}

/**
 * spec.decryption (engine/decrypt-step.ts), then the postBuild substitution held back from the build. The
 * same objects array comes back when nothing was encrypted.
 */
async function decryptStep(
  ports: Ports,
  input: RenderStepInput,
  built: Built,
  readKeys: KeysReader | undefined,
): Promise<Result<LocatedObject[]>> {
  const { spec } = input;
  if (!holdsEncrypted(built.objects))
    return spec.decryption ? substituteAfter(built.objects, input) : ok(built.objects);
  const keys = readKeys ? await readKeys() : undefined;
  if (keys && !keys.ok) return keys;
  const decrypted = await decryptObjects(ports.decryptor, built.objects, keys?.value, {
    // kustomize and helm may change an object's unencrypted fields (namespace, labels): its MAC no longer
    // holds, and Flux skips it; plain files are decrypted exactly as committed, MAC checked
    checkMac: built.tool === 'plain',
    signal: input.signal,
  });
  if (!decrypted.ok) return decrypted;
  return spec.decryption ? substituteAfter(decrypted.value.objects, input) : ok(decrypted.value.objects);
}

function substituteAfter(objects: LocatedObject[], input: RenderStepInput): Result<LocatedObject[]> {
  const step = substitutionStep(input.substitution);
  if (!step) return ok(objects);
  const out: LocatedObject[] = [];
  for (const o of objects) {
    const r = step(o.object, o.where);
    if (!r.ok) return r;
    out.push({ ...o, object: r.value as LocatedObject['object'] });
  }
  return ok(out);
}

type KeysReader = () => Promise<Result<{ identities: string[]; from: string }>>;

/** The first call's promise, shared by every later call. */
function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

async function buildObjects(
  ports: Ports,
  input: RenderStepInput,
  keys: KeysReader | undefined,
): Promise<Result<Built>> {
  const { source, spec, owner } = input;
  if (!ports.render) {
    const objects = readObjects(source.files, input.substitution);
    if (!objects.ok) return objects;
    return ok({ tool: 'plain', objects: objects.value, what: plainPackage(source.files.length) });
  }
  const tool = await ports.render.toolFor(source.checkoutRoot, source.packagePath, spec);
  // the reconcile read them in its Inputs step (engine/inputs.ts); the CLI reads them here
  const helm =
    tool !== 'helm'
      ? ok(undefined)
      : input.helm
        ? ok(input.helm)
        : await readHelmInputs(ports, input.objects, spec, owner.namespace);
  if (!helm.ok) return helm;
  return ports.render.build({
    checkoutRoot: source.checkoutRoot,
    packagePath: source.packagePath,
    // the render cache's key: what the package reads, so a commit elsewhere in a monorepo is a cache hit; a
    // reconcile's Inputs digest replaces it (engine/inputs.ts)
    commit: source.pathRevision ?? source.commit,
    ...(input.inputsDigest !== undefined ? { inputs: input.inputsDigest } : {}),
    files: source.files,
    spec,
    releaseName: owner.name,
    releaseNamespace: spec.targetNamespace ?? owner.namespace,
    valuesFrom: helm.value?.valuesFrom ?? [],
    capabilities: helm.value?.capabilities,
    ...(input.substitution ? { substitution: input.substitution } : {}),
    // Flux's DecryptSources: encrypted secretGenerator files/envs and patches, decrypted before the build
    ...(keys && ports.decryptor ? { decrypt: { decryptor: ports.decryptor, keys } } : {}),
    // spec.helm.lookup: the templates' lookup reads the cluster as this run's identity (engine/helm-lookup.ts)
    ...(tool === 'helm' && spec.helm?.lookup ? { lookup: helmLookup(input.objects) } : {}),
    signal: input.signal,
  });
}
