import { readFile, readdir, readlink, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Reason } from '../../api/reasons.ts';
import { fail, ok } from '../../core/failure.ts';
import type { Result } from '../../core/failure.ts';
import { validatePackagePath } from './validate.ts';
import { isInside } from '../../core/inside.ts';

/**
 * Reads the package's manifests out of a checkout. git checks out symlinks as they are (core.symlinks=true),
 * so this reader is where escapes are stopped: every file and directory under the package path, symlinks
 * followed, must really live inside the checkout. Limits are checked from file sizes before anything is read.
 */

export interface PackageFile {
  /** Path relative to the package directory, "/"-separated, e.g. deploy.yaml (messages name repo paths). */
  path: string;
  content: string;
}

export interface ReadLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

const MANIFEST = /\.(ya?ml|json)$/i;

export async function readPackageFiles(
  checkoutDir: string,
  path: string,
  limits: ReadLimits,
): Promise<Result<PackageFile[]>> {
  const valid = validatePackagePath(path);
  if (!valid.ok) return valid;
  const root = await realpath(checkoutDir);
  const start = valid.value === '.' ? root : join(root, valid.value);
  const shown = JSON.stringify(valid.value);

  // Resolved component by component: a symlink anywhere along the path (not only at its end) that leaves the
  // checkout is an escape, even when what it points to does not exist (no probing the host's files).
  const real = await realpathInside(root, start);
  if (real === undefined)
    return fail(Reason.PathEscape, `path ${shown} resolves outside the repository (symlink)`, { terminal: true });
  if (real === null) return fail(Reason.PathNotFound, `path ${shown} does not exist at this revision`);
  if (!(await stat(real)).isDirectory()) {
    return fail(Reason.PathNotFound, `path ${shown} is not a directory at this revision`);
  }

  const found: { path: string; real: string; size: number }[] = [];
  const visited = new Set<string>();
  const inRepo = (rel: string): string => (valid.value === '.' ? rel : `${valid.value}/${rel}`);
  // Iterative walk; `dir` is the path relative to the package as it appears in git, `realDir` where it really is.
  const pending: { dir: string; realDir: string }[] = [{ dir: '', realDir: real }];
  while (pending.length > 0) {
    const { dir, realDir } = pending.pop() as { dir: string; realDir: string };
    if (visited.has(realDir)) continue; // a symlinked directory already walked (or a loop)
    visited.add(realDir);
    const entries = (await readdir(realDir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      if (entry.name === '.git') continue;
      const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
      const repoPath = inRepo(rel);
      let target = join(realDir, entry.name);
      if (entry.isSymbolicLink()) {
        const resolved = await realpathInside(root, target);
        if (resolved === undefined) {
          return fail(
            Reason.PathEscape,
            `${JSON.stringify(repoPath)} is a symlink that points outside the repository`,
            { terminal: true },
          );
        }
        if (resolved === null) {
          if (MANIFEST.test(entry.name)) {
            return fail(
              Reason.PathNotFound,
              `${JSON.stringify(repoPath)} is a symlink to a file missing at this revision`,
            );
          }
          continue;
        }
        target = resolved;
      }
      const info = await stat(target);
      if (info.isDirectory()) {
        pending.push({ dir: rel, realDir: target });
      } else if (info.isFile() && MANIFEST.test(entry.name)) {
        if (info.size > limits.maxFileBytes) {
          return fail(
            Reason.ArtifactTooLarge,
            `${JSON.stringify(repoPath)} is ${info.size} bytes; the limit per file is ${limits.maxFileBytes}`,
            {
              terminal: true,
            },
          );
        }
        found.push({ path: rel, real: target, size: info.size });
        if (found.length > limits.maxFiles) {
          return fail(Reason.ArtifactTooLarge, `path ${shown} holds more than ${limits.maxFiles} manifest files`, {
            terminal: true,
          });
        }
      }
    }
  }

  const total = found.reduce((sum, f) => sum + f.size, 0);
  if (total > limits.maxTotalBytes) {
    return fail(
      Reason.ArtifactTooLarge,
      `path ${shown} holds ${total} bytes of manifests; the limit is ${limits.maxTotalBytes}`,
      {
        terminal: true,
      },
    );
  }
  found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const files: PackageFile[] = [];
  for (const f of found) files.push({ path: f.path, content: await readFile(f.real, 'utf8') });
  return ok(files);
}

/** Symlinks followed at most, like the kernel's own limit (ELOOP): a longer chain counts as not resolving. */
const MAX_SYMLINK_HOPS = 40;

/**
 * The real path of `path` if it lies inside `root`; undefined if it escapes; null if it does not resolve
 * (missing, dangling, a loop) while every symlink on the way stays inside. A dangling symlink is judged by
 * where it would lead: its target's deepest existing ancestor, resolved for real, so a link through a
 * symlinked directory to a missing file outside is an escape, not "not found".
 */
export async function realpathInside(root: string, path: string, hops = 0): Promise<string | null | undefined> {
  try {
    const real = await realpath(path);
    return isInside(root, real) ? real : undefined;
  } catch {
    // does not resolve: find out where it would lead, one component at a time
  }
  if (hops > MAX_SYMLINK_HOPS) return null;
  const parent = dirname(path);
  if (parent === path) return undefined;
  const realParent = await realpathInside(root, parent, hops);
  if (realParent === null || realParent === undefined) return realParent;
  const candidate = join(realParent, basename(path));
  if (!isInside(root, candidate)) return undefined;
  let text: string;
  try {
    text = await readlink(candidate);
  } catch {
    return null; // not a symlink: simply missing (or under a file)
  }
  const next = await realpathInside(root, resolve(realParent, text), hops + 1);
  return next === undefined ? undefined : null;
}
