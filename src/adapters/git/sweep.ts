import { chmod, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { STAGING_PREFIX, removeTree } from './cache.ts';
import { OPERATION_DIR_PREFIX } from './git-command.ts';

/**
 * Start-up crash recovery for the git cache. A process killed mid-operation can leave: a per-operation
 * directory with secret material (`op-*`), a half-built checkout or cache repo (`.staging-*`), and git lock
 * files that would make every later fetch into that repo fail. Call before the first git operation; never
 * while operations run. Returns the paths removed.
 */

/**
 * Makes sure the cache root is the controller's own: created 0700 when missing; refused when it is a symlink,
 * belongs to another user, or others may write to it. Whoever can write there could plant a checkout the
 * controller would apply (the default lives in a shared $TMPDIR); whoever can read it reads every package
 * and the per-operation credential files. A root we own but others may read is made 0700.
 */
export async function ensurePrivateRoot(root: string): Promise<void> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  const info = await lstat(root);
  const uid = process.getuid?.();
  if (info.isSymbolicLink() || !info.isDirectory()) {
    throw new Error(`--git-cache-dir ${root} is not a directory (a symlink?): refusing to use it`);
  }
  if (uid !== undefined && info.uid !== uid) {
    throw new Error(`--git-cache-dir ${root} belongs to uid ${info.uid}, not to this process (uid ${uid})`);
  }
  if ((info.mode & 0o022) !== 0) {
    throw new Error(`--git-cache-dir ${root} is writable by others (mode ${(info.mode & 0o777).toString(8)})`);
  }
  if ((info.mode & 0o077) !== 0) await chmod(root, 0o700);
}

const GIT_LOCKS = ['shallow.lock', 'config.lock', 'packed-refs.lock', 'HEAD.lock', 'index.lock'];

export async function sweepStaleTemp(root: string): Promise<string[]> {
  const removed: string[] = [];
  const remove = async (path: string): Promise<void> => {
    await removeTree(path);
    removed.push(path);
  };

  for (const dir of [root, join(root, 'tmp')]) {
    for (const name of await list(dir)) if (name.startsWith(OPERATION_DIR_PREFIX)) await remove(join(dir, name));
  }
  for (const key of await list(root)) {
    if (!/^[0-9a-f]{32}$/.test(key)) continue;
    const base = join(root, key);
    for (const name of await list(base)) if (name.startsWith(STAGING_PREFIX)) await remove(join(base, name));
    for (const name of await list(join(base, 'checkouts'))) {
      if (name.startsWith(STAGING_PREFIX)) await remove(join(base, 'checkouts', name));
    }
    const repoFiles = await list(join(base, 'repo'));
    for (const lock of GIT_LOCKS.filter((l) => repoFiles.includes(l))) {
      const path = join(base, 'repo', lock);
      await rm(path, { force: true });
      removed.push(path);
    }
  }
  return removed;
}

async function list(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}
