import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { KustomizeSpec } from '../../api/packagesync.ts';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { changesKustomization, editKustomization } from '../../core/render/kustomization-edit.ts';
import { checkKustomizationTree, findKustomization, repoPath } from './kustomize-check.ts';
import { realpathInside } from '../git/read-package.ts';
import { runTool } from './run-tool.ts';
import { describeToolFailure, type ToolLimits } from './tool-failure.ts';
import { materializedView } from './scratch-view.ts';
import { decryptSources, type SourceDecryption } from './decrypt-sources.ts';

/**
 * `kustomize build` of the package, as upstream builds it. The checkout stays read-only: the build runs in a
 * scratch view of it (scratch-view.ts) where the package's kustomization gets spec.kustomize and origin
 * annotations (core/render/kustomization-edit.ts). Every kustomization reachable is checked first
 * (kustomize-check.ts), then kustomize runs sandboxed (run-tool.ts) with plugins, exec functions and Helm
 * off (its defaults). With spec.decryption, the sops-encrypted files the kustomizations read (Flux's
 * DecryptSources: secretGenerator files and envs, patches) are decrypted into the scratch view, which is
 * removed when the build ends; the checkout keeps the ciphertext.
 */

export interface KustomizeInput {
  /** The checkout root (read-only). */
  checkoutRoot: string;
  /** Repo-relative package path ("." for the root). */
  packagePath: string;
  spec: KustomizeSpec | undefined;
  bin: string;
  limits: ToolLimits;
  /** Where the scratch view is made. */
  scratchDir: string;
  signal?: AbortSignal;
  /** spec.decryption: decrypt the encrypted sources first (absent: kustomize reads them as committed). */
  decrypt?: SourceDecryption;
}

export interface KustomizeOutput {
  stdout: string;
  /**
   * 'objects': stdout holds the render worker's JSON array of the output's documents, not YAML (a caller that
   * asked for it, and output the worker could give so: worker-protocol.ts WorkerOutput). Default 'yaml'.
   */
  format?: 'yaml' | 'objects';
  /** Set when encrypted sources were decrypted into the build: the output then holds plaintext. */
  decrypted?: { files: string[]; cipherDigest: string };
}

/** The package's kustomization as the build will see it, every kustomization reachable checked, sources decrypted. */
export interface PreparedKustomization {
  /** The checkout root, symlinks resolved. */
  root: string;
  /** The package directory in the checkout. */
  pkg: string;
  /** The package's kustomization file, repo-relative (as messages name it). */
  shown: string;
  /** Its text with spec.kustomize and origin annotations applied. */
  edited: string;
  /** Repo-relative paths the kustomizations reach (the scratch view links them). */
  reached: string[];
  /** Decrypted sources, repo-relative → plaintext (empty without spec.decryption). */
  plaintext: Map<string, Buffer>;
  cipherDigest?: string;
}

/** The checks both render engines run first (tree check, edits, decryption): nothing runs before they pass. */
export async function prepareKustomization(
  input: Pick<KustomizeInput, 'checkoutRoot' | 'packagePath' | 'spec' | 'decrypt'>,
): Promise<Result<PreparedKustomization>> {
  const root = await realpath(input.checkoutRoot);
  const pkg = input.packagePath === '.' ? root : join(root, input.packagePath);
  const name = await findKustomization(pkg);
  if (name === undefined)
    return fail(Reason.RenderFailed, `${input.packagePath} holds no kustomization`, { terminal: true });
  const shown = input.packagePath === '.' ? name : `${input.packagePath}/${name}`;
  // read nothing through a kustomization that links out of the checkout (the tree check says so too)
  if (typeof (await realpathInside(root, join(pkg, name))) !== 'string')
    return fail(
      Reason.RenderRefused,
      `${shown} is a symlink that resolves outside the repository; kustomize would read it — commit the kustomization itself`,
      { terminal: true },
    );
  const committed = await readFile(join(pkg, name), 'utf8');
  const edited = editKustomization(committed, shown, input.spec);
  if (!edited.ok) return edited;
  // every kustomization reachable, with the package's as the build will see it, is checked in the checkout; one
  // that spec.kustomize leaves as it is (buildMetadata added, no file named) is read as committed: the text the
  // sparse checkout's walk read already (core/render/kustomization-yaml.ts remembers it)
  const text = changesKustomization(input.spec) ? edited.value : committed;
  const checked = await checkKustomizationTree(root, pkg, { file: join(pkg, name), text });
  if (!checked.ok) return checked;
  const decrypted = input.decrypt ? await decryptSources(root, checked.value.sources, input.decrypt) : undefined;
  if (decrypted && !decrypted.ok) return decrypted;
  return ok({
    root,
    pkg,
    shown,
    edited: edited.value,
    reached: checked.value.reached.map((p) => repoPath(root, p)),
    plaintext: decrypted?.value.files ?? new Map<string, Buffer>(),
    ...(decrypted ? { cipherDigest: decrypted.value.cipherDigest } : {}),
  });
}

/**
 * kustomize quotes the lines it cannot read (an env file's line, a patch): with decrypted sources they may
 * be plaintext, so its error output is not shown.
 */
export function decryptedBuildFailed<T>(packagePath: string, files: Iterable<string>, exit: string): Result<T> {
  return fail(
    Reason.RenderFailed,
    `kustomize build ${packagePath} failed (${exit}) after decrypting ${[...files].join(', ')}; ` +
      'its error output is not shown, as it may quote decrypted values: decrypt with sops and run kustomize build locally to see it',
    { terminal: true },
  );
}

export async function kustomizeBuild(input: KustomizeInput): Promise<Result<KustomizeOutput>> {
  const prepared = await prepareKustomization(input);
  if (!prepared.ok) return prepared;
  const { root, pkg, shown, plaintext } = prepared.value;

  const work = await mkdtemp(join(input.scratchDir, 'packagesync-kustomize-'));
  try {
    const viewRoot = join(work, 'repo');
    // only what the kustomizations reach: every kustomization directory is made anew holding just that, so
    // kustomize, resolving each one's real path, lands in the view (where decrypted files are), not the checkout
    await materializedView(root, viewRoot, {
      reached: prepared.value.reached,
      files: new Map<string, string | Buffer>([...plaintext, [shown, prepared.value.edited]]),
    });
    const viewPkg = input.packagePath === '.' ? viewRoot : join(viewRoot, input.packagePath);
    const run = await runTool({
      bin: input.bin,
      // LoadRestrictionsNone: bases elsewhere in the repository; the tree check above keeps it inside
      args: ['build', '--load-restrictor', 'LoadRestrictionsNone', '.'],
      cwd: viewPkg,
      // the view, and the checkout its symlinks lead into: nothing else is readable (render-sandbox)
      reads: [work, root],
      timeoutMs: input.limits.timeoutMs,
      maxOutputBytes: input.limits.maxOutputBytes,
      signal: input.signal,
      hidePaths: [
        { path: viewPkg, as: input.packagePath },
        { path: pkg, as: input.packagePath },
        { path: viewRoot, as: '' },
        { path: work, as: '' },
        { path: root, as: '' },
      ],
    });
    if (!run.ok && plaintext.size > 0 && run.kind === 'exit')
      return decryptedBuildFailed(input.packagePath, plaintext.keys(), `exit ${run.exitCode ?? 'signal'}`);
    if (!run.ok) return describeToolFailure('kustomize', `kustomize build ${input.packagePath}`, run, input);
    if (plaintext.size === 0) return ok({ stdout: run.stdout });
    return ok({
      stdout: run.stdout,
      decrypted: { files: [...plaintext.keys()], cipherDigest: prepared.value.cipherDigest ?? '' },
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
