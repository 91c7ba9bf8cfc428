import { lstat, mkdir, readlink, symlink, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';

/**
 * A writable view of a read-only checkout that holds only what a build reads, some files replaced: the
 * directories on the way to each of them are made anew (holding nothing else), each path the build reads
 * is a symlink to the checkout's own, and each replaced file is written. Its cost is one entry per path a
 * kustomization names, whatever else the repository holds: a package among 1,000 sibling directories once
 * cost 1,000 symlinks per build when every entry on the way was linked. Nothing is written into the checkout.
 *
 * A symlink of the checkout met on the way to a path is recreated with its own target text, and that target
 * joins the view in turn, so a relative link stays inside the view: kustomize resolves the directory of every
 * kustomization it loads (EvalSymlinks), and a base reached through a link must land on the view's copy,
 * where its replaced files are, not in the checkout.
 */
export interface ViewLayout {
  /** Repo-relative paths the build reads (kustomize-check.ts: KustomizationTree.reached). */
  reached: readonly string[];
  /** Repo-relative file → its contents in the view (mode 0600). */
  files: ReadonlyMap<string, string | Buffer>;
}

interface Node {
  children: Map<string, Node>;
  content?: string | Buffer;
  /** The checkout's symlink text, recreated as is. */
  link?: string;
}

/** More links followed on the way to one path than this: a loop (Linux gives up at 40 as well). */
const MAX_LINKS = 40;

export async function materializedView(root: string, to: string, layout: ViewLayout): Promise<void> {
  const top: Node = { children: new Map() };
  const segments = (path: string) =>
    posix
      .normalize(path)
      .split('/')
      .filter((s) => s !== '' && s !== '.');
  for (const [file, content] of layout.files) {
    let node = top;
    for (const seg of segments(file)) node = child(node, seg);
    node.content = content;
  }
  // each path with the number of links followed to reach it
  const pending: [string, number][] = layout.reached.map((path) => [path, 0]);
  while (pending.length > 0) {
    const [path, hops] = pending.pop() as [string, number];
    const segs = segments(path);
    // outside the checkout, or a loop: the tree check refused both already
    if (segs[0] === '..' || hops > MAX_LINKS) continue;
    let node = top;
    for (let i = 0; i < segs.length; i++) {
      const name = segs[i]!;
      const next = node.children.get(name);
      if (next?.content !== undefined) break;
      if (next !== undefined && next.children.size > 0) {
        node = next;
        continue;
      }
      const at = segs.slice(0, i + 1).join('/');
      let link = next?.link;
      if (link === undefined) {
        const info = await lstat(join(root, at)).catch(() => undefined);
        if (info === undefined) break; // kustomize will say what is missing
        if (info.isSymbolicLink()) link = child(node, name).link = await readlink(join(root, at));
      }
      if (link !== undefined) {
        // the link's target, and the rest of the path beneath it, join the view
        if (!posix.isAbsolute(link))
          pending.push([[posix.dirname(at), link, ...segs.slice(i + 1)].join('/'), hops + 1]);
        break;
      }
      node = child(node, name);
    }
  }
  await makeDir(root, to, top);
}

const child = (node: Node, name: string): Node => {
  let next = node.children.get(name);
  if (!next) node.children.set(name, (next = { children: new Map() }));
  return next;
};

async function makeDir(src: string, dst: string, node: Node): Promise<void> {
  await mkdir(dst, { mode: 0o700 });
  for (const [name, next] of node.children) {
    const from = join(src, name);
    const into = join(dst, name);
    if (next.content !== undefined) await writeFile(into, next.content, { mode: 0o600 });
    else if (next.link !== undefined) await symlink(next.link, into);
    else if (next.children.size > 0) await makeDir(from, into, next);
    else await symlink(from, into);
  }
}
