import { createHash } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Spec } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { canonicalJson } from '../../core/render/canonical.ts';
import {
  objectsOfHelmObjects,
  objectsOfHelmOutput,
  objectsOfKustomizeObjects,
  objectsOfKustomizeOutput,
} from '../../core/render/built.ts';
import type { LocatedObject } from '../../core/render/manifests.ts';
import { plainPackage, readObjects } from '../../core/render/render.ts';
import { substitutionStep } from '../../core/render/substitute.ts';
import type { SourceFile, Substitution } from '../../core/render/types.ts';
import { realpathInside } from '../git/read-package.ts';
import { helmTemplate, type HelmCapabilities } from './helm.ts';
import { findKustomization } from './kustomize-check.ts';
import { kustomizeBuild } from './kustomize.ts';
import { runTool } from './run-tool.ts';
import { RenderWorkerPools } from './worker-pools.ts';
import type { HelmLookup } from './worker-lookup.ts';
import { helmInWorker, kustomizeInWorker } from './worker-render.ts';
import type { SourceDecryption } from './decrypt-sources.ts';
import type { ToolLimits } from './tool-failure.ts';

/**
 * Step 3's I/O half, the one chooser the controller and the CLI share: a kustomization at the package path
 * → kustomize; a Chart.yaml there, or spec.helm set → helm template; else the plain files as read. The
 * result is the built objects, located in their source files and not yet normalised (postBuild
 * substitution, commonMetadata, namespaces and owner labels come after, pure, in core/render).
 *
 * Tool builds are cached by every input (commit, path, spec fields, valuesFrom contents, capabilities,
 * the tools' own versions, asked once per binary): a no-op resync runs no build. `stats()` counts runs and hits.
 */

export type BuildTool = 'plain' | 'kustomize' | 'helm';

/**
 * How kustomize and Helm run: 'worker', the libraries in a pool of long-lived sandboxed workers
 * (worker-pool.ts, docs/adr/0038); 'subprocess', the pinned binaries once per render (the reference).
 */
export type RenderEngine = 'worker' | 'subprocess';

/** A tool's output as kept: the YAML it printed, or the render worker's JSON objects of it (kustomize). */
type OutputFormat = 'yaml' | 'objects';

export interface RenderToolsConfig {
  kustomizePath: string;
  helmPath: string;
  limits: ToolLimits;
  /** Scratch copies and value files; default the OS temp dir. */
  scratchDir?: string;
  /** Built packages kept (least recently used dropped first). 0 disables the cache. */
  cacheEntries?: number;
  /** Total bytes of cached tool output kept (default 64 MiB). */
  cacheBytes?: number;
  /** Default 'subprocess'. */
  engine?: RenderEngine;
  /**
   * The worker pool (engine 'worker'): its binary, its size, and the directories its workers may read. A
   * checkout outside them (a local directory) renders by subprocess. With `kustomizeBin`, kustomize renders run
   * on that binary (worker-pools.ts).
   */
  worker?: { bin: string; kustomizeBin?: string; size: number; readRoots: string[] };
}

export interface BuildRequest {
  checkoutRoot: string;
  /** Repo-relative package path, "." for the root. */
  packagePath: string;
  /** The commit the checkout holds: part of the cache key. Undefined (a local directory): not cached. */
  commit?: string;
  /**
   * A reconcile's Inputs digest (engine/inputs.ts, core/inputs.ts): every input of the package in one value.
   * When set, the cache is keyed by it (and the tool's own binary) instead of the request's fields.
   */
  inputs?: string;
  /** The package's manifest files as the source read them (plain packages). */
  files: readonly SourceFile[];
  spec: Pick<Spec, 'kustomize' | 'helm'>;
  releaseName: string;
  releaseNamespace: string;
  /** Contents of spec.helm.valuesFrom, in order. */
  valuesFrom?: string[];
  capabilities?: HelmCapabilities;
  /** spec.postBuild, its variables resolved: run on every built object (never cached: the tool output is). */
  substitution?: Substitution;
  /**
   * spec.decryption: a kustomize build decrypts the sops-encrypted files its kustomizations read first
   * (adapters/render/decrypt-sources.ts). A build that decrypted any is never cached: its output holds plaintext.
   */
  decrypt?: SourceDecryption;
  /**
   * spec.helm.lookup on: Helm's `lookup` asks this (the target cluster, as the PackageSync's identity). Only the
   * render worker can ask mid-render; a render that asks is never cached (what it read may change any time).
   */
  lookup?: HelmLookup;
  signal?: AbortSignal;
}

export interface Built {
  tool: BuildTool;
  objects: LocatedObject[];
  /** How the package is named in an empty-render message. */
  what: string;
  /**
   * Encrypted sources the build decrypted (repo-relative), and a digest of their ciphertext: the objects
   * then hold plaintext, and a digest of them must not leave the controller.
   */
  decryptedSources?: { files: string[]; cipherDigest: string };
}

export interface RenderStats {
  /** Tool subprocesses started (kustomize build, helm template). */
  toolRuns: number;
  /** Seconds spent in them, checks and scratch view included. */
  toolSeconds: number;
  cacheHits: number;
  /** Render workers started, and replaced after a timeout, panic or crash (engine 'worker'). */
  workersStarted?: number;
  workersReplaced?: number;
}

export interface Renderer {
  /** Which tool the package at this path needs. */
  toolFor(checkoutRoot: string, packagePath: string, spec: Pick<Spec, 'helm'>): Promise<BuildTool>;
  build(req: BuildRequest): Promise<Result<Built>>;
  stats(): RenderStats;
  /** Stops the render workers, if any. */
  close(): void;
}

/**
 * 'kustomize' or 'helm' when the directory at `packagePath` (inside the checkout, symlinks resolved) holds
 * a kustomization or a Chart.yaml; undefined otherwise (a plain package, or a path the source reports on).
 * The source reads no manifest files for a built package: the tool reads what it needs.
 */
export async function builtPackageAt(checkoutRoot: string, packagePath: string): Promise<BuildTool | undefined> {
  const root = await realpath(checkoutRoot);
  const dir = await realpathInside(root, packagePath === '.' ? root : join(root, packagePath));
  if (typeof dir !== 'string') return undefined;
  if ((await findKustomization(dir)) !== undefined) return 'kustomize';
  if ((await stat(join(dir, 'Chart.yaml')).catch(() => undefined))?.isFile()) return 'helm';
  return undefined;
}

export function createRenderer(config: RenderToolsConfig): Renderer {
  const scratchDir = config.scratchDir ?? tmpdir();
  const maxEntries = config.cacheEntries ?? 256;
  const maxBytes = config.cacheBytes ?? 64 << 20;
  const cache = new Map<string, { stdout: string; format: OutputFormat; bytes: number }>();
  let cachedBytes = 0;
  const counters: RenderStats = { toolRuns: 0, toolSeconds: 0, cacheHits: 0 };
  const versions = new Map<string, Promise<string>>();
  const pools = config.engine === 'worker' && config.worker ? new RenderWorkerPools(config.worker) : undefined;

  /**
   * What a binary says its version is, asked once: the image replaces /usr/local/bin/kustomize in place, so
   * its path alone does not name the build.
   */
  function versionOf(bin: string, args: string[]): Promise<string> {
    let answer = versions.get(bin);
    if (answer === undefined) {
      answer = (async () => {
        // asked a few times, then kept whatever the answer: a key that changed with a flaky answer would miss
        for (let attempt = 0; attempt < 3; attempt++) {
          const r = await runTool({ bin, args, cwd: '', timeoutMs: 10_000, maxOutputBytes: 4096, hidePaths: [] });
          if (r.ok) return r.stdout.trim();
        }
        return 'unknown';
      })();
      versions.set(bin, answer);
    }
    return answer;
  }

  async function toolVersions(
    tool: BuildTool,
    req: BuildRequest,
    engine: RenderEngine,
  ): Promise<Record<string, string>> {
    const sops: Record<string, string> = req.decrypt
      ? { sops: await versionOf(req.decrypt.decryptor.bin, ['--version', '--disable-version-check']) }
      : {};
    // the worker's libraries and its own build: another worker build is another input
    if (engine === 'worker' && pools)
      return { worker: await pools.for(tool).versions(), ...(tool === 'kustomize' ? sops : {}) };
    if (tool === 'helm') return { helm: await versionOf(config.helmPath, ['version', '--short']) };
    return { kustomize: await versionOf(config.kustomizePath, ['version']), ...sops };
  }

  async function toolFor(checkoutRoot: string, packagePath: string, spec: Pick<Spec, 'helm'>): Promise<BuildTool> {
    const dir = packagePath === '.' ? checkoutRoot : join(checkoutRoot, packagePath);
    if ((await findKustomization(dir)) !== undefined) return 'kustomize';
    if (spec.helm !== undefined) return 'helm';
    if ((await stat(join(dir, 'Chart.yaml')).catch(() => undefined))?.isFile()) return 'helm';
    return 'plain';
  }

  function remember(key: string, stdout: string, format: OutputFormat): void {
    if (maxEntries === 0 || stdout.length > maxBytes) return;
    cache.set(key, { stdout, format, bytes: stdout.length });
    cachedBytes += stdout.length;
    for (const [k, v] of cache) {
      if (cache.size <= maxEntries && cachedBytes <= maxBytes) break;
      cache.delete(k);
      cachedBytes -= v.bytes;
    }
  }

  async function build(req: BuildRequest): Promise<Result<Built>> {
    const tool = await toolFor(req.checkoutRoot, req.packagePath, req.spec);
    if (tool === 'plain') {
      // Flux would generate a kustomization for a plain directory; here a plain package stays plain files
      // (docs/migrating.md), so fields that only a kustomize build can apply are refused, not ignored.
      const shaping = (['patches', 'images', 'components', 'namePrefix', 'nameSuffix'] as const).filter(
        (f) => req.spec.kustomize?.[f] !== undefined,
      );
      if (shaping.length > 0) {
        return fail(
          Reason.RenderRefused,
          `spec.kustomize.${shaping.join(', spec.kustomize.')} ${shaping.length === 1 ? 'needs' : 'need'} a kustomization: ` +
            `${req.packagePath} holds no kustomization.yaml; add one (resources: the package's files) or remove the field`,
          { terminal: true },
        );
      }
      const objects = readObjects(req.files, req.substitution);
      if (!objects.ok) return objects;
      return ok({ tool, objects: objects.value, what: plainPackage(req.files.length) });
    }
    const checkoutRoot = await realpath(req.checkoutRoot);
    const engine: RenderEngine = pools?.covers(checkoutRoot) ? 'worker' : 'subprocess';
    const lookup = tool === 'helm' ? req.lookup : undefined;
    if (lookup && engine !== 'worker')
      return fail(
        Reason.RenderFailed,
        `spec.helm.lookup needs the render worker (helm template cannot ask the cluster): run the controller with --render-engine=worker, or set spec.helm.lookup to false`,
        { terminal: true },
      );
    const key =
      req.commit === undefined || lookup
        ? undefined
        : cacheKey(tool, req, config, await toolVersions(tool, req, engine), engine);
    const hit = key === undefined ? undefined : cache.get(key);
    let stdout: string;
    let format: OutputFormat = 'yaml';
    let decryptedSources: Built['decryptedSources'];
    if (hit && key !== undefined) {
      counters.cacheHits++;
      cache.delete(key); // most recently used last
      cache.set(key, hit);
      stdout = hit.stdout;
      format = hit.format;
    } else {
      counters.toolRuns++;
      const started = performance.now();
      const common = {
        checkoutRoot,
        packagePath: req.packagePath,
        limits: config.limits,
        scratchDir,
        signal: req.signal,
      };
      const helmInput = {
        ...common,
        spec: req.spec.helm,
        releaseName: req.spec.helm?.releaseName ?? req.releaseName,
        namespace: req.spec.helm?.namespace ?? req.releaseNamespace,
        valuesFrom: req.valuesFrom ?? [],
        capabilities: req.capabilities,
      };
      const decrypt = req.decrypt ? { decrypt: { ...req.decrypt, signal: req.signal } } : {};
      const run =
        engine === 'worker' && pools
          ? tool === 'kustomize'
            ? await kustomizeInWorker({
                ...common,
                spec: req.spec.kustomize,
                pool: pools.for(tool),
                objects: true,
                ...decrypt,
              })
            : await helmInWorker({ ...helmInput, pool: pools.for(tool), lookup, objects: true })
          : tool === 'kustomize'
            ? await kustomizeBuild({
                ...common,
                spec: req.spec.kustomize,
                bin: config.kustomizePath,
                ...decrypt,
              })
            : await helmTemplate({ ...helmInput, bin: config.helmPath });
      counters.toolSeconds += (performance.now() - started) / 1000;
      if (!run.ok) return run;
      if (typeof run.value === 'string') stdout = run.value;
      else {
        stdout = run.value.stdout;
        format = run.value.format ?? 'yaml';
        decryptedSources = (run.value as { decrypted?: Built['decryptedSources'] }).decrypted;
      }
      // plaintext is never kept: a package with encrypted sources is built (and decrypted) on every use
      if (key !== undefined && !decryptedSources) remember(key, stdout, format);
    }
    const step = substitutionStep(req.substitution);
    const objects =
      tool === 'helm'
        ? format === 'objects'
          ? objectsOfHelmObjects(stdout, req.packagePath, step)
          : objectsOfHelmOutput(stdout, req.packagePath, step)
        : format === 'objects'
          ? objectsOfKustomizeObjects(stdout, req.packagePath, step)
          : objectsOfKustomizeOutput(stdout, req.packagePath, step);
    if (!objects.ok) return objects;
    const what = tool === 'kustomize' ? `kustomize build ${req.packagePath}` : `helm template ${req.packagePath}`;
    return ok({ tool, objects: objects.value, what, ...(decryptedSources ? { decryptedSources } : {}) });
  }

  const stats = (): RenderStats => {
    if (!pools) return { ...counters };
    const workers = pools.stats();
    return { ...counters, workersStarted: workers.started, workersReplaced: workers.replaced };
  };
  return { toolFor, build, stats, close: () => pools?.close() };
}

/**
 * Every input of a tool build. valuesFrom contents enter only as a digest of the whole key: the key is
 * never logged, and holds no value in clear.
 */
export function cacheKey(
  tool: BuildTool,
  req: BuildRequest,
  config: RenderToolsConfig,
  versions: Record<string, string>,
  engine: RenderEngine = 'subprocess',
): string {
  // the engine, the tool's binary (the worker: its path, libraries and build), version and limits are the
  // renderer's own; everything of the package is in the Inputs digest
  const renderer = {
    engine,
    bin: engine === 'worker' ? config.worker?.bin : tool === 'kustomize' ? config.kustomizePath : config.helmPath,
    versions,
    limits: config.limits,
  };
  const decrypt = tool === 'kustomize' && req.decrypt !== undefined;
  if (req.inputs !== undefined) {
    return createHash('sha256')
      .update(canonicalJson({ tool, inputs: req.inputs, decrypt, ...renderer }))
      .digest('hex');
  }
  const input = {
    tool,
    commit: req.commit,
    path: req.packagePath,
    kustomize: tool === 'kustomize' ? (req.spec.kustomize ?? null) : null,
    helm:
      tool === 'helm'
        ? {
            spec: req.spec.helm ?? null,
            releaseName: req.releaseName,
            namespace: req.releaseNamespace,
            valuesFrom: req.valuesFrom ?? [],
            capabilities: req.capabilities ?? null,
          }
        : null,
    // without decryption kustomize reads encrypted sources as committed: another output
    decrypt,
    // another binary, or another version of it, is another input
    ...renderer,
  };
  return createHash('sha256').update(canonicalJson(input)).digest('hex');
}
