/**
 * Steps 2 and 3 of a reconcile for `packagesync plan`, with the controller's own functions: the source (the
 * PackageSync's spec.source, or another git URL and ref, or a local directory), postBuild's variables
 * (engine/substitution-inputs.ts), then the render step (engine/render-step.ts: the build chooser, Helm
 * valuesFrom, commonMetadata, renderBuiltForCluster). The source's credentials are read by the controller's
 * own engine/source-credentials.ts (git secretRef; OCI secretRef and certSecretRef). The CLI wires the same
 * adapters the controller wires; only the git cache is a throwaway directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ConfigMaps } from '../adapters/kube/configmaps.ts';
import { Secrets } from '../adapters/kube/secrets.ts';
import { createGitSource } from '../adapters/git/source-port.ts';
import { createChartSource } from '../adapters/chart/source-port.ts';
import { withChartDependencies } from '../adapters/chart/git-chart-dependencies.ts';
import { createCheckoutStore } from '../adapters/oci/checkout-store.ts';
import { createOciSource, sourceBySpec } from '../adapters/oci/index.ts';
import { createRenderer } from '../adapters/render/build.ts';
import { createSopsDecryptor } from '../adapters/render/sops.ts';
import type { GitRef, PackageSync, Spec } from '../api/packagesync.ts';
import { defaultToolPaths } from '../config/tool-paths.ts';
import type { Failure } from '../core/failure.ts';
import type { PackageObjects, Ports } from '../engine/ports.ts';
import type { SourcePort } from '../adapters/git/source-port.ts';
import { renderStep, type RenderedStep } from '../engine/render-step.ts';
import { readCredentials } from '../engine/source-credentials.ts';
import { readSubstitution } from '../engine/substitution-inputs.ts';
import type { Cluster } from './cluster.ts';
import { CliError, ExitCode } from './exit-codes.ts';
import { localSource } from './local-package.ts';

export interface PlanSourceFlags {
  url?: string;
  ref?: string;
  dir?: string;
  allowInsecureHttp: boolean;
  /** The controller's --sops-age-secret, as NAMESPACE/NAME: spec.decryption without a secretRef uses its keys. */
  sopsAgeSecret?: string;
}

/** `packagesync plan`'s flags (plan.ts), also read by `plan packagesyncset/NAME` (set-plan.ts). */
export interface PlanFlags extends PlanSourceFlags {
  namespace?: string;
  kubeconfig?: string;
  output: 'text' | 'json' | 'markdown';
}

/** `--sops-age-secret NAMESPACE/NAME` (the controller's Secret lives in the controller's namespace). */
export function parseSopsAgeSecret(value: string | undefined): { namespace: string; name: string } | undefined {
  if (value === undefined) return undefined;
  const m = /^([a-z0-9][-a-z0-9]*)\/([a-z0-9][-a-z0-9.]*)$/.exec(value);
  if (!m)
    throw new CliError(
      ExitCode.Invalid,
      `--sops-age-secret ${value}: give the controller's Secret as NAMESPACE/NAME, e.g. packagesync-system/sops-age`,
    );
  return { namespace: m[1]!, name: m[2]! };
}

export interface PlannedSource {
  revision: string;
  rendered: RenderedStep;
}

/** `--ref`: `branch:NAME`, `tag:NAME`, `semver:RANGE`, `commit:SHA`, a bare 40-hex commit, or a bare branch name. */
export function parseRefFlag(ref: string): GitRef {
  const m = /^(branch|tag|semver|commit):(.+)$/.exec(ref);
  if (m) return { [m[1]!]: m[2]! } as GitRef;
  if (/^[0-9a-f]{40}$/.test(ref)) return { commit: ref };
  return { branch: ref };
}

/**
 * The controller's sources (git, OCI, chart: whichever spec.source names) and its defaults over a throwaway cache;
 * none for --dir. `packagesync plan packagesyncset/NAME` opens one for all its targets: each target's checkout of
 * the same commit comes from that one cache.
 */
export interface PlanSources {
  source?: SourcePort;
  close(): Promise<void>;
}

export async function openPlanSources(flags: Pick<PlanSourceFlags, 'dir' | 'allowInsecureHttp'>): Promise<PlanSources> {
  if (flags.dir) return { close: () => Promise.resolve() };
  const cacheDir = await mkdtemp(join(tmpdir(), 'packagesync-plan-'));
  const tools = defaultToolPaths();
  const log = pino({ level: 'silent' });
  const config = {
    gitCacheDir: join(cacheDir, 'git'),
    gitTimeout: '90s',
    allowInsecureHttp: flags.allowInsecureHttp,
    maxFiles: 10_000,
    maxFileBytes: 4 << 20,
    maxTotalBytes: 64 << 20,
    ociMaxLayerBytes: 64 << 20,
  };
  const archives = createCheckoutStore(config);
  const git = await createGitSource(config, log);
  const source = sourceBySpec(
    // a chart in git whose dependencies are not vendored gets them fetched (docs/adr/0041)
    withChartDependencies(git, { ...config, helmPath: tools.helm }, archives, log),
    createOciSource(config, log, archives),
    createChartSource({ ...config, helmPath: tools.helm }, log, archives, git),
  );
  return { source, close: () => rm(cacheDir, { recursive: true, force: true }) };
}

/**
 * The PackageSync's package rendered as the controller would render it, from the source the flags choose;
 * `shared`: sources the caller opened (and closes), else a throwaway one for this call.
 */
export async function renderForPlan(
  cluster: Cluster,
  ps: PackageSync,
  spec: Spec,
  objects: PackageObjects,
  flags: PlanSourceFlags,
  shared?: PlanSources,
): Promise<PlannedSource> {
  const namespace = ps.metadata.namespace;
  const sopsAgeSecret = parseSopsAgeSecret(flags.sopsAgeSecret);
  const secrets = new Secrets(cluster.client);
  const tools = defaultToolPaths();
  const log = pino({ level: 'silent' });
  const sources = shared ?? (await openPlanSources(flags));
  const source = sources.source;
  try {
    const ports: Ports = {
      objects: cluster.objects,
      packageSyncs: cluster.packageSyncs,
      secrets,
      configMaps: new ConfigMaps(cluster.client),
      source: source ?? { fetch: () => Promise.reject(new Error('no git source for a local directory')) },
      log,
      ...(sopsAgeSecret ? { sopsAgeSecret } : {}),
      decryptor: createSopsDecryptor({ bin: tools.sops, timeoutMs: 60_000, maxOutputBytes: 64 << 20 }),
      render: createRenderer({
        kustomizePath: tools.kustomize,
        helmPath: tools.helm,
        limits: { timeoutMs: 60_000, maxOutputBytes: 64 << 20, maxFiles: 10_000 },
        cacheEntries: 0,
      }),
    };
    const signal = AbortSignal.timeout(5 * 60_000);
    let fetched;
    if (flags.dir) {
      fetched = await localSource(flags.dir);
    } else {
      const wanted = {
        ...spec.source,
        ...(flags.url ? { url: flags.url } : {}),
        ...(flags.ref ? { ref: parseRefFlag(flags.ref) } : {}),
      };
      // the controller's own reading of the source's Secrets (git secretRef; OCI secretRef and certSecretRef)
      const credentials = await readCredentials(ps, spec, ports);
      if (!credentials.ok) throw invalid(credentials.failure);
      const got = await source!.fetch(wanted, credentials.value, signal);
      if (!got.ok) throw invalid(got.failure);
      fetched = got.value;
    }
    const substitution = await readSubstitution(namespace, spec.postBuild, ports, true);
    if (!substitution.ok) throw invalid(substitution.failure);
    const rendered = await renderStep(ports, {
      source: fetched,
      spec,
      owner: { name: ps.metadata.name, namespace },
      objects,
      ...(substitution.value ? { substitution: substitution.value } : {}),
      signal,
    });
    if (!rendered.ok) throw invalid(rendered.failure);
    return { revision: fetched.revision, rendered: rendered.value };
  } finally {
    if (!shared) await sources.close();
  }
}

const invalid = (f: Failure) => new CliError(ExitCode.Invalid, `${f.reason}: ${f.message}`);
