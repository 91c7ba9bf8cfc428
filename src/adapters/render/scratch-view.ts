import { mkdir, readdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A writable view of a read-only checkout in which one file of the package directory can be replaced: the
 * directories from the root down to the package are made anew, and every other entry on the way (and in the
 * package directory, except `replace`) is a symlink to the checkout's own. It costs one symlink per entry
 * along the path, not one per file of the repository. Nothing is ever written into the checkout.
 */
export async function scratchView(root: string, packagePath: string, to: string, replace: string): Promise<string> {
  const segments = packagePath === '.' ? [] : packagePath.split('/');
  let src = root;
  let dst = to;
  await mkdir(dst, { mode: 0o700 });
  for (let i = 0; i <= segments.length; i++) {
    const next = segments[i];
    for (const entry of await readdir(src, { withFileTypes: true })) {
      if (entry.name === next || (next === undefined && entry.name === replace)) continue;
      await symlink(join(src, entry.name), join(dst, entry.name));
    }
    if (next === undefined) break;
    src = join(src, next);
    dst = join(dst, next);
    await mkdir(dst, { mode: 0o700 });
  }
  return dst;
}
