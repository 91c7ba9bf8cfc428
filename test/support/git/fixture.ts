import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGitHttpServer, type GitHttpAuth, type GitHttpServer, type GitHttpServerOptions } from './http-server.ts';
import { commitFiles, createRepoRoot, type FileChange, type TestRepo } from './repo.ts';
import { startGitSshServer, type GitSshServer } from './ssh-server.ts';

/**
 * A test file's git world in one handle: a repo root, the servers started over it and a private checkout
 * cache directory. dispose() stops every server and removes both directories, so a suite's afterAll is one
 * line and a server started late (or a second one) cannot be forgotten.
 */
export interface GitFixture {
  /** Directory the servers serve from (GIT_PROJECT_ROOT). */
  root: string;
  /** An empty temp directory for the adapter's checkout cache (removed by dispose). */
  cacheRoot: string;
  /** A bare repository `<root>/<name>.git` with `main` as its HEAD. */
  createRepo(name: string): Promise<TestRepo>;
  /** A new repository with one commit of `files` on main. */
  repoWith(name: string, files: Record<string, FileChange>, message?: string): Promise<{ repo: TestRepo; sha: string }>;
  /** A smart-HTTP server over root (anonymous unless `auth` says otherwise; https with `tls`); stopped by dispose. */
  serveHttp(auth?: GitHttpAuth, tls?: GitHttpServerOptions['tls']): Promise<GitHttpServer>;
  /** An sshd over root (key-only, git-shell); stopped by dispose. */
  serveSsh(): Promise<GitSshServer>;
  dispose(): Promise<void>;
}

export async function startGitFixture(): Promise<GitFixture> {
  const repos = await createRepoRoot();
  const cacheRoot = await mkdtemp(join(tmpdir(), 'psync-cache-'));
  const servers: { stop(): Promise<void> }[] = [];
  const started = async <S extends { stop(): Promise<void> }>(server: Promise<S>): Promise<S> => {
    const s = await server;
    servers.push(s);
    return s;
  };
  return {
    root: repos.root,
    cacheRoot,
    createRepo: (name) => repos.createRepo(name),
    async repoWith(name, files, message = 'initial') {
      const repo = await repos.createRepo(name);
      return { repo, sha: await commitFiles(repo, 'main', files, message) };
    },
    serveHttp: (auth = 'none', tls) => started(startGitHttpServer({ root: repos.root, auth, tls })),
    serveSsh: () => started(startGitSshServer({ root: repos.root })),
    async dispose() {
      await Promise.all(servers.map((s) => s.stop()));
      await repos.dispose();
      await rm(cacheRoot, { recursive: true, force: true });
    },
  };
}
