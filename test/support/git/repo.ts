import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Bare repositories for the test git servers, edited with plumbing (fast-import, update-ref) straight in the
 * bare repo: no scratch clone, one or two git processes per commit, so fixtures stay fast.
 */

export interface TestRepo {
  name: string;
  /** Absolute path of the bare repository, e.g. /tmp/x/web.git */
  dir: string;
}

/** A file's new content; null deletes it; {symlink} commits a symbolic link (mode 120000) with that target. */
export type FileChange = string | Buffer | null | { symlink: string };

const IDENTITY = ['-c', 'user.name=PackageSync Tests', '-c', 'user.email=tests@packagesync.invalid'];

/** Environment for fixture git commands: no system or user config can change what the fixtures build. */
export function gitEnvForTests(home: string = tmpdir()): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
  };
}

export function repoDirName(name: string): string {
  return name.endsWith('.git') ? name : `${name}.git`;
}

/** Runs git with explicit argv (no shell) and returns trimmed stdout. */
export function git(args: string[], opts: { cwd?: string; input?: string | Buffer } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...IDENTITY, ...args],
      { cwd: opts.cwd, env: gitEnvForTests(), maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`git ${args.join(' ')} failed: ${String(stderr).trim() || err.message}`));
        else resolve(String(stdout).trim());
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** A temp directory to serve repositories from; dispose() removes it. */
export async function createRepoRoot(): Promise<{
  root: string;
  createRepo(name: string): Promise<TestRepo>;
  dispose(): Promise<void>;
}> {
  const root = await mkdtemp(join(tmpdir(), 'psync-git-root-'));
  return {
    root,
    createRepo: (name) => createRepo(root, name),
    dispose: () => rm(root, { recursive: true, force: true }),
  };
}

/** A bare repository `<root>/<name>.git` with `main` as its HEAD, accepting pushes over smart HTTP. */
export async function createRepo(root: string, name: string): Promise<TestRepo> {
  const dir = join(root, repoDirName(name));
  await git(['init', '--quiet', '--bare', '--initial-branch=main', dir]);
  await git(['config', 'http.receivepack', 'true'], { cwd: dir });
  return { name, dir };
}

export async function headOf(repo: TestRepo, branch: string): Promise<string | undefined> {
  try {
    return await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { cwd: repo.dir });
  } catch {
    return undefined;
  }
}

let clock = 1_700_000_000;

/** Commits `files` on top of `branch` (creating it from nothing if absent) and returns the new commit sha. */
export async function commitFiles(
  repo: TestRepo,
  branch: string,
  files: Record<string, FileChange>,
  message: string,
): Promise<string> {
  const parent = await headOf(repo, branch);
  const chunks: Buffer[] = [];
  const data = (payload: Buffer): void => {
    chunks.push(Buffer.from(`data ${payload.length}\n`), payload, Buffer.from('\n'));
  };
  // Distinct timestamps keep otherwise identical commits (same tree, parent and message) distinct.
  clock += 1;
  chunks.push(Buffer.from(`commit refs/heads/${branch}\nmark :1\n`));
  chunks.push(Buffer.from(`committer PackageSync Tests <tests@packagesync.invalid> ${clock} +0000\n`));
  data(Buffer.from(message));
  if (parent) chunks.push(Buffer.from(`from ${parent}\n`));
  for (const [path, change] of Object.entries(files)) {
    const quoted = quotePath(path);
    if (change === null) {
      chunks.push(Buffer.from(`D ${quoted}\n`));
    } else if (typeof change === 'object' && !Buffer.isBuffer(change)) {
      chunks.push(Buffer.from(`M 120000 inline ${quoted}\n`));
      data(Buffer.from(change.symlink));
    } else {
      chunks.push(Buffer.from(`M 100644 inline ${quoted}\n`));
      data(Buffer.isBuffer(change) ? change : Buffer.from(change));
    }
  }
  chunks.push(Buffer.from('done\n'));
  await git(['fast-import', '--quiet', '--done', '--force'], { cwd: repo.dir, input: Buffer.concat(chunks) });
  const head = await headOf(repo, branch);
  if (!head) throw new Error(`commit on ${branch} in ${repo.name} produced no head`);
  return head;
}

export function deletePath(repo: TestRepo, branch: string, path: string): Promise<string> {
  return commitFiles(repo, branch, { [path]: null }, `delete ${path}`);
}

/**
 * `git revert` of `sha` on `branch`, as a user rolls back: in a scratch clone (revert needs a work tree), pushed
 * back to the bare repository. Returns the new commit's sha.
 */
export async function revertCommit(repo: TestRepo, branch: string, sha: string): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'psync-git-revert-'));
  try {
    await git(['clone', '--quiet', '--branch', branch, repo.dir, scratch]);
    await git(['revert', '--no-edit', sha], { cwd: scratch });
    await git(['push', '--quiet', 'origin', branch], { cwd: scratch });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const head = await headOf(repo, branch);
  if (!head) throw new Error(`revert on ${branch} in ${repo.name} produced no head`);
  return head;
}

/** Points `branch` at `sha` (force, like a rewritten history). */
export async function moveBranch(repo: TestRepo, branch: string, sha: string): Promise<void> {
  await git(['update-ref', `refs/heads/${branch}`, sha], { cwd: repo.dir });
}

/** Lightweight tag by default; `{annotated: true}` makes an annotated tag object (ls-remote then shows ^{}). */
export async function tag(
  repo: TestRepo,
  name: string,
  ref: string,
  opts: { annotated?: boolean; message?: string } = {},
): Promise<void> {
  if (opts.annotated) await git(['tag', '-a', '-m', opts.message ?? name, name, ref], { cwd: repo.dir });
  else await git(['update-ref', `refs/tags/${name}`, ref], { cwd: repo.dir });
}

/** Makes `branch` the repository's HEAD (what a clone checks out by default). */
export async function setHead(repo: TestRepo, branch: string): Promise<void> {
  await git(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { cwd: repo.dir });
}

function quotePath(path: string): string {
  // fast-import takes C-style quoted paths; quote only when needed.
  if (!/[\s"\\]/.test(path) && !path.startsWith('"')) return path;
  return `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}
