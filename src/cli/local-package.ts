/**
 * A package directory on disk, read and rendered exactly as the controller reads and renders a git
 * checkout: the same file reader (symlinks must stay inside, size limits), the same renderer, the same
 * owner labels and namespace rules.
 */
import { stat } from 'node:fs/promises';
import { readPackageFiles } from '../adapters/git/read-package.ts';
import type { Discovery } from '../adapters/kube/discovery.ts';
import type { KubeObject } from '../core/object.ts';
import { planWaves, withDigest } from '../core/plan/index.ts';
import type { Owner } from '../core/plan/ownership.ts';
import type { Substitution } from '../core/render/index.ts';
import { renderForCluster } from '../engine/package-plan.ts';
import { CliError, ExitCode } from './exit-codes.ts';

/** The controller's defaults (--max-files, --max-file-bytes, --max-total-bytes). */
const LIMITS = { maxFiles: 10_000, maxFileBytes: 4 << 20, maxTotalBytes: 64 << 20 };

export interface RenderedDir {
  /** The objects as rendered: what planChanges compares with the cluster. */
  desired: KubeObject[];
  /** The objects as the applier sends them (digest annotation stamped), in apply order, wave by wave. */
  waves: KubeObject[][];
  digest: string;
}

export interface RenderDirOptions {
  owner: Owner;
  targetNamespace?: string;
  /** The cluster's discovery when connected; offline, built-in kinds and the package's own CRDs decide. */
  discovery?: Discovery;
  allowEmpty: boolean;
  /** spec.postBuild, from --substitute and --substitute-from-file. */
  substitution?: Substitution;
}

export async function renderDir(dir: string, opts: RenderDirOptions): Promise<RenderedDir> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new CliError(ExitCode.Invalid, `${dir} is not a directory`);
  const files = await readPackageFiles(dir, '.', LIMITS);
  if (!files.ok) throw new CliError(ExitCode.Invalid, `${files.failure.reason}: ${files.failure.message}`);
  const rendered = await renderForCluster(
    files.value,
    {
      owner: opts.owner,
      defaultNamespace: opts.owner.namespace,
      targetNamespace: opts.targetNamespace,
      allowEmpty: opts.allowEmpty,
      substitution: opts.substitution,
    },
    opts.discovery,
  );
  if (!rendered.ok) throw new CliError(ExitCode.Invalid, `${rendered.failure.reason}: ${rendered.failure.message}`);
  const desired = rendered.value.objects;
  return { desired, waves: planWaves(desired.map(withDigest)), digest: rendered.value.digest };
}
