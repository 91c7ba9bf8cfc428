import { copyFile, link, mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A writable view of a read-only checkout: directories made anew, files hard-linked (copied when the
 * scratch directory is on another filesystem), symlinks recreated with the same target. Only the one file
 * the caller replaces (the package's kustomization) is ever written; a hard-linked file is never written
 * through, it is unlinked first. Returns the number of entries, bounded by `maxEntries`.
 */
export async function scratchCopy(from: string, to: string, maxEntries: number): Promise<number> {
  let entries = 0;
  let linkable = true;
  const pending: [string, string][] = [[from, to]];
  await mkdir(to, { recursive: true, mode: 0o700 });
  while (pending.length > 0) {
    const [src, dst] = pending.pop() as [string, string];
    for (const entry of await readdir(src, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      if (++entries > maxEntries) throw new TooManyEntries(maxEntries);
      const s = join(src, entry.name);
      const d = join(dst, entry.name);
      if (entry.isDirectory()) {
        await mkdir(d, { mode: 0o700 });
        pending.push([s, d]);
      } else if (entry.isSymbolicLink()) {
        await symlink(await readlink(s), d);
      } else if (entry.isFile()) {
        if (linkable) {
          try {
            await link(s, d);
            continue;
          } catch (err) {
            const code = (err as NodeJS.ErrnoException).code;
            if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK') throw err;
            linkable = false;
          }
        }
        await copyFile(s, d);
      }
      // sockets, fifos, devices: git cannot check them out; nothing to copy
    }
  }
  return entries;
}

export class TooManyEntries extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`more than ${limit} files in the checkout`);
    this.limit = limit;
  }
}
