import { mkdir, readdir, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A writable view of a read-only checkout in which some files are replaced: the directories from the root
 * down to each replaced file (and to each directory asked for) are made anew, and every other entry on the
 * way is a symlink to the checkout's own. It costs one symlink per entry along those paths, not one per
 * file of the repository. Nothing is ever written into the checkout.
 *
 * A symlink of the checkout is recreated with its own target text, so a relative link stays inside the
 * view: kustomize resolves the directory of every kustomization it loads (EvalSymlinks), and a base reached
 * through a link must land on the view's copy, where its replaced files are, not in the checkout.
 */
export interface ViewLayout {
  /** Repo-relative directories to make anew (e.g. every kustomization directory a build reaches). */
  dirs?: readonly string[];
  /** Repo-relative file → its contents in the view (mode 0600). */
  files: ReadonlyMap<string, string | Buffer>;
}

interface Node {
  children: Map<string, Node>;
  content?: string | Buffer;
}

export async function materializedView(root: string, to: string, layout: ViewLayout): Promise<void> {
  const top: Node = { children: new Map() };
  const nodeAt = (path: string): Node => {
    let node = top;
    for (const seg of path === '.' || path === '' ? [] : path.split('/')) {
      let next = node.children.get(seg);
      if (!next) node.children.set(seg, (next = { children: new Map() }));
      node = next;
    }
    return node;
  };
  for (const dir of layout.dirs ?? []) nodeAt(dir);
  for (const [file, content] of layout.files) nodeAt(file).content = content;
  await makeDir(root, to, top);
}

async function makeDir(src: string, dst: string, node: Node): Promise<void> {
  await mkdir(dst, { mode: 0o700 });
  for (const entry of await readdir(src, { withFileTypes: true })) {
    if (node.children.has(entry.name)) continue;
    const from = join(src, entry.name);
    await symlink(entry.isSymbolicLink() ? await readlink(from) : from, join(dst, entry.name));
  }
  for (const [name, child] of node.children) {
    if (child.content !== undefined) await writeFile(join(dst, name), child.content, { mode: 0o600 });
    else await makeDir(join(src, name), join(dst, name), child);
  }
}

/**
 * The view kustomize builds in without decryption: the package directory made anew with its kustomization
 * replaced (spec.kustomize applied). Returns the package directory in the view.
 */
export async function scratchView(
  root: string,
  packagePath: string,
  to: string,
  replace: string,
  content: string,
): Promise<string> {
  const file = packagePath === '.' ? replace : `${packagePath}/${replace}`;
  await materializedView(root, to, { files: new Map([[file, content]]) });
  return packagePath === '.' ? to : join(to, packagePath);
}
