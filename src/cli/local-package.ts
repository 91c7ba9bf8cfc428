/**
 * A package directory on disk, read and rendered exactly as the controller reads and renders a git
 * checkout: the same file reader (symlinks must stay inside, size limits), the same renderer, the same
 * owner labels and namespace rules, the same build chooser (plain files, kustomize, helm template). The
 * directory's git repository (its nearest .git ancestor) plays the checkout: kustomize bases elsewhere in it
 * work, nothing outside it is read.
 */
import { realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { readPackageFiles } from '../adapters/git/read-package.ts';
import type { Discovery } from '../adapters/kube/discovery.ts';
import type { KubeObject } from '../core/object.ts';
import { buildGraph, planWaves, withDigest } from '../core/plan/index.ts';
import type { Owner } from '../core/plan/ownership.ts';
import { builtPackageAt, createRenderer } from '../adapters/render/build.ts';
import type { Substitution } from '../core/render/index.ts';
import { renderBuiltForCluster } from '../engine/package-plan.ts';
import { defaultToolPaths } from '../config/tool-paths.ts';
import type { FetchedSource } from '../engine/ports.ts';
import { decryptBuilt, sourceDecryption } from './decrypt.ts';
import type { DuplicateKeyNote } from '../core/render/types.ts';
import { CliError, ExitCode } from './exit-codes.ts';

/** The controller's defaults (--max-files, --max-file-bytes, --max-total-bytes). */
const LIMITS = { maxFiles: 10_000, maxFileBytes: 4 << 20, maxTotalBytes: 64 << 20 };

export interface RenderedDir {
  /** The objects as rendered: what planChanges compares with the cluster. */
  desired: KubeObject[];
  /**
   * The objects as the applier sends them (digest annotation stamped), in the dependency graph's apply
   * order; in kind order when the graph is invalid (a cycle: `apply` and the controller refuse it).
   */
  ordered: KubeObject[];
  digest: string;
  /** refKey → the file that defines the object. */
  sources: Map<string, string>;
  /** Keys the render tool wrote twice, applied last-wins (docs/adr/0034). */
  duplicateKeys?: DuplicateKeyNote[];
}

export interface RenderDirOptions {
  owner: Owner;
  targetNamespace?: string;
  /** The cluster's discovery when connected; offline, built-in kinds and the package's own CRDs decide. */
  discovery?: Discovery;
  allowEmpty: boolean;
  /** spec.postBuild, from --substitute and --substitute-from-file. */
  substitution?: Substitution;
  /** spec.decryption's identities, from --age-key-file (cli/decrypt.ts). */
  decrypt?: { identities: string[]; from: string };
}

export async function renderDir(dir: string, opts: RenderDirOptions): Promise<RenderedDir> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new CliError(ExitCode.Invalid, `${dir} is not a directory`);
  // The repository the directory belongs to is what a checkout would be: kustomize bases elsewhere in it work.
  const real = await realpath(dir);
  const root = (await repositoryRoot(real)) ?? real;
  const packagePath = relative(root, real).split(sep).join('/') || '.';
  const tool = await builtPackageAt(root, packagePath);
  const files = tool ? { ok: true as const, value: [] } : await readPackageFiles(root, packagePath, LIMITS);
  if (!files.ok) throw new CliError(ExitCode.Invalid, `${files.failure.reason}: ${files.failure.message}`);
  const tools = defaultToolPaths();
  const renderer = createRenderer({
    kustomizePath: tools.kustomize,
    helmPath: tools.helm,
    limits: { timeoutMs: 60_000, maxOutputBytes: 64 << 20, maxFiles: LIMITS.maxFiles },
    cacheEntries: 0,
  });
  const built = await renderer.build({
    checkoutRoot: root,
    packagePath,
    files: files.value,
    spec: {},
    releaseName: opts.owner.name,
    releaseNamespace: opts.targetNamespace ?? opts.owner.namespace,
    // connected: the cluster's version and API versions, as the controller passes them; offline, helm's defaults
    capabilities: tool === 'helm' && opts.discovery ? await opts.discovery.capabilities() : undefined,
    // decrypting: substitution runs after decryption, as in the controller (engine/render-step.ts)
    ...(opts.substitution && !opts.decrypt ? { substitution: opts.substitution } : {}),
    // and encrypted kustomize sources (secretGenerator files/envs, patches) are decrypted before the build
    ...(opts.decrypt ? { decrypt: sourceDecryption(opts.decrypt, tools.sops) } : {}),
  });
  if (!built.ok) throw new CliError(ExitCode.Invalid, `${built.failure.reason}: ${built.failure.message}`);
  const objects = opts.decrypt
    ? await decryptBuilt(built.value, opts.decrypt, tools.sops, opts.substitution)
    : built.value.objects;
  const rendered = await renderBuiltForCluster(
    { ...built.value, objects },
    {
      owner: opts.owner,
      defaultNamespace: opts.owner.namespace,
      targetNamespace: opts.targetNamespace,
      allowEmpty: opts.allowEmpty,
    },
    opts.discovery,
  );
  if (!rendered.ok) throw new CliError(ExitCode.Invalid, `${rendered.failure.reason}: ${rendered.failure.message}`);
  const desired = rendered.value.objects;
  return {
    desired,
    ordered: applyOrder(desired.map(withDigest)),
    digest: rendered.value.digest,
    sources: rendered.value.sources,
    ...(rendered.value.duplicateKeys ? { duplicateKeys: rendered.value.duplicateKeys } : {}),
  };
}

/**
 * The directory as the source step's answer (a FetchedSource), for `packagesync plan --dir`: the nearest git
 * repository plays the checkout, the directory is the package path, and the files are read with the
 * controller's reader and limits.
 */
export async function localSource(dir: string): Promise<FetchedSource> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new CliError(ExitCode.Invalid, `${dir} is not a directory`);
  const real = await realpath(dir);
  const root = (await repositoryRoot(real)) ?? real;
  const packagePath = relative(root, real).split(sep).join('/') || '.';
  const files = (await builtPackageAt(root, packagePath))
    ? { ok: true as const, value: [] }
    : await readPackageFiles(root, packagePath, LIMITS);
  if (!files.ok) throw new CliError(ExitCode.Invalid, `${files.failure.reason}: ${files.failure.message}`);
  return { revision: `dir:${real}`, commit: '', files: files.value, checkoutRoot: root, packagePath };
}

/** Offline there is no cluster to ask about depends-on targets outside the package: they count as present. */
function applyOrder(stamped: KubeObject[]): KubeObject[] {
  const graph = buildGraph(stamped, { exists: () => true });
  return graph.ok ? graph.value.order.map((i) => stamped[i]!) : planWaves(stamped).flat();
}

/** The nearest directory at or above `dir` holding .git, if any. */
async function repositoryRoot(dir: string): Promise<string | undefined> {
  for (let d = dir; ; d = dirname(d)) {
    if (await stat(join(d, '.git')).catch(() => undefined)) return d;
    if (dirname(d) === d) return undefined;
  }
}
