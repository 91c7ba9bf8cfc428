/**
 * Pipeline step 3, render: build (plain files | kustomize | helm template, adapters/render) → pure steps on
 * the built objects → normalise (namespaces, owner labels, duplicates: core/render). The pure steps run
 * in this order: postBuild substitution (when the spec asks), then Flux's commonMetadata.
 *
 * Scope comes from discovery: a kind it does not know (a CRD installed since it was loaded) gets one
 * refresh and a second (pure) render; the build itself is not repeated.
 */
import type { Spec } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import type { Built } from '../adapters/render/build.ts';
import { fail, ok, type Result } from '../core/failure.ts';
import { groupOf, type KubeObject } from '../core/object.ts';
import { withCommonMetadata } from '../core/render/built.ts';
import { readObjects, renderObjects, type RenderedPackage } from '../core/render/index.ts';
import type { FetchedSource, Ports } from './ports.ts';

export interface RenderStepInput {
  source: FetchedSource;
  spec: Spec;
  owner: { name: string; namespace: string };
  impersonate?: string;
  signal: AbortSignal;
}

export async function renderStep(ports: Ports, input: RenderStepInput): Promise<Result<RenderedPackage>> {
  const { spec, owner } = input;
  const built = await buildObjects(ports, input);
  if (!built.ok) return built;
  const objects = withCommonMetadata(built.value.objects, spec.kustomize?.commonMetadata);

  const discovery = ports.objects.discovery;
  const render = () =>
    renderObjects(
      objects,
      {
        owner,
        defaultNamespace: owner.namespace,
        targetNamespace: spec.targetNamespace,
        isNamespaced: (g, k) => discovery.isNamespaced(g, k),
        allowEmpty: spec.allowEmpty,
      },
      built.value.what,
    );
  let rendered = render();
  const unknownKind = (o: KubeObject) => discovery.isNamespaced(groupOf(o.apiVersion), o.kind) === undefined;
  if (rendered.ok && rendered.value.objects.some(unknownKind)) {
    await discovery.refresh();
    rendered = render();
  }
  return rendered;
}

async function buildObjects(ports: Ports, input: RenderStepInput): Promise<Result<Built>> {
  const { source, spec, owner } = input;
  if (!ports.render) {
    const objects = readObjects(source.files);
    if (!objects.ok) return objects;
    return ok({ tool: 'plain', objects: objects.value, what: `the package (${source.files.length} manifest files)` });
  }
  const tool = await ports.render.toolFor(source.checkoutRoot, source.packagePath, spec);
  let valuesFrom: string[] = [];
  let capabilities;
  if (tool === 'helm') {
    const values = await readValuesFrom(ports, spec, owner.namespace, input.impersonate);
    if (!values.ok) return values;
    valuesFrom = values.value;
    capabilities = await ports.objects.discovery.capabilities();
  }
  return ports.render.build({
    checkoutRoot: source.checkoutRoot,
    packagePath: source.packagePath,
    commit: source.commit,
    files: source.files,
    spec,
    releaseName: owner.name,
    releaseNamespace: spec.targetNamespace ?? owner.namespace,
    valuesFrom,
    capabilities,
    signal: input.signal,
  });
}

/**
 * spec.helm.valuesFrom, read from the PackageSync's own namespace. Messages name the object and key,
 * never a value.
 */
async function readValuesFrom(
  ports: Ports,
  spec: Spec,
  namespace: string,
  impersonate: string | undefined,
): Promise<Result<string[]>> {
  const out: string[] = [];
  for (const ref of spec.helm?.valuesFrom ?? []) {
    const named = `${ref.kind} ${namespace}/${ref.name}`;
    let data: Record<string, string> | undefined;
    if (ref.kind === 'Secret') {
      data = await ports.secrets.read(namespace, ref.name);
    } else {
      const cm = await ports.objects.get(
        { group: '', kind: 'ConfigMap', namespace, name: ref.name },
        impersonate ? { impersonate } : {},
      );
      data = cm ? ((cm.data as Record<string, string> | undefined) ?? {}) : undefined;
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
    out.push(text);
  }
  return ok(out);
}
