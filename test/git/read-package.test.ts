import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reason } from '../../src/api/reasons.ts';
import { createGitFetcher, readPackageFiles } from '../../src/adapters/git/index.ts';
import { commitFiles, startGitFixture } from '../support/git/index.ts';
import type { GitFixture, GitHttpServer } from '../support/git/index.ts';

const MARKER = 'CONTENT-MARKER-7731';
const limits = { maxFiles: 50, maxFileBytes: 4096, maxTotalBytes: 16_384 };

describe('readPackageFiles on a real checkout', () => {
  let repos: GitFixture;
  let server: GitHttpServer;
  let dir: string;

  beforeAll(async () => {
    repos = await startGitFixture();
    const repo = await repos.createRepo('pkgs');
    const many: Record<string, string> = {};
    for (let i = 0; i < 6; i++) many[`many/f${i}.yaml`] = `i: ${i}\n`;
    const commit = await commitFiles(
      repo,
      'main',
      {
        'ok/a.yaml': 'a: 1\n',
        'ok/sub/b.yml': 'b: 2\n',
        'ok/c.json': '{"c":3}\n',
        'ok/README.md': 'not a manifest\n',
        'ok/upper.YAML': 'u: 1\n',
        'ok/linked.yaml': { symlink: '../shared/base.yaml' },
        'ok/loop': { symlink: '.' },
        'shared/base.yaml': 'base: true\n',
        'escape-file/passwd.yaml': { symlink: '/etc/passwd' },
        'escape-relative/host.yaml': { symlink: '../../../../../../../../etc/hostname' },
        'escape-dir/keep.yaml': 'k: 1\n',
        'escape-dir/etc': { symlink: '/etc' },
        'escape-other/README': { symlink: '/etc/passwd' },
        'pkg-link': { symlink: '/etc' },
        'inner-link': { symlink: 'ok' },
        'probe/gone.yaml': { symlink: '../pkg-link/psync-no-such-file-4711.yaml' },
        'loop-pair/a.yaml': { symlink: 'b.yaml' },
        'loop-pair/b.yaml': { symlink: 'a.yaml' },
        'dangling-inside/gone.yaml': { symlink: '../shared/missing.yaml' },
        'dangling-outside/gone.yaml': { symlink: '/nonexistent/x.yaml' },
        'a-file.yaml': 'x: 1\n',
        'big/large.yaml': `${MARKER}\n${'x'.repeat(5000)}\n`,
        'total/one.yaml': `${MARKER}${'y'.repeat(3000)}\n`,
        'total/two.yaml': 'z'.repeat(3000),
        'total/three.yaml': 'z'.repeat(3000),
        'total/four.yaml': 'z'.repeat(3000),
        'total/five.yaml': 'z'.repeat(3000),
        'total/six.yaml': 'z'.repeat(3000),
        ...many,
      },
      'fixtures',
    );
    server = await repos.serveHttp();
    const checkout = await createGitFetcher({ cacheRoot: repos.cacheRoot, allowInsecureHttp: true }).fetchRevision(
      server.url('pkgs'),
      commit,
      undefined,
    );
    if (!checkout.ok) throw new Error(checkout.failure.message);
    dir = checkout.value.dir;
  });

  afterAll(async () => {
    await repos?.dispose();
  });

  it('reads .yaml/.yml/.json recursively, sorted, package-relative, following in-repo symlinks', async () => {
    expect(await readPackageFiles(dir, './ok/', limits)).toEqual({
      ok: true,
      value: [
        { path: 'a.yaml', content: 'a: 1\n' },
        { path: 'c.json', content: '{"c":3}\n' },
        { path: 'linked.yaml', content: 'base: true\n' },
        { path: 'sub/b.yml', content: 'b: 2\n' },
        { path: 'upper.YAML', content: 'u: 1\n' },
      ],
    });
  });

  it.each([
    ['escape-file', 'escape-file/passwd.yaml'],
    ['escape-relative', 'escape-relative/host.yaml'],
    ['escape-dir', 'escape-dir/etc'],
    ['escape-other', 'escape-other/README'],
    ['dangling-outside', 'dangling-outside/gone.yaml'],
    // dangling, but only through a symlinked directory that leaves the checkout: still an escape
    ['probe', 'probe/gone.yaml'],
  ])('%s → PathEscape naming %s', async (path, file) => {
    const r = await readPackageFiles(dir, path, limits);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure.reason).toBe(Reason.PathEscape);
    expect(r.failure.message).toContain(JSON.stringify(file));
  });

  it('a package path that is itself a symlink out → PathEscape', async () => {
    const r = await readPackageFiles(dir, 'pkg-link', limits);
    expect(!r.ok && r.failure.reason).toBe(Reason.PathEscape);
  });

  // Whether the target exists outside must not matter: "not found" would let a spec probe the controller's files.
  it.each([['pkg-link/passwd'], ['pkg-link/psync-no-such-dir-4711'], ['escape-dir/etc'], ['escape-dir/etc/x/y']])(
    'a symlink out in the middle or at the end of the package path (%s) → PathEscape',
    async (path) => {
      const r = await readPackageFiles(dir, path, limits);
      expect(!r.ok && r.failure.reason).toBe(Reason.PathEscape);
      expect(!r.ok && r.failure.message).not.toContain('root:');
    },
  );

  it('a symlinked directory in the middle of the package path that stays inside is followed', async () => {
    expect(await readPackageFiles(dir, 'inner-link/sub', limits)).toEqual({
      ok: true,
      value: [{ path: 'b.yml', content: 'b: 2\n' }],
    });
  });

  it('a symlink loop → PathNotFound naming the file, without hanging', async () => {
    const r = await readPackageFiles(dir, 'loop-pair', limits);
    expect(!r.ok && r.failure.reason).toBe(Reason.PathNotFound);
    expect(!r.ok && r.failure.message).toContain('"loop-pair/a.yaml"');
  });

  it.each([['missing'], ['a-file.yaml'], ['dangling-inside'], ['ok/no-such'], ['a-file.yaml/x']])(
    '%s → PathNotFound',
    async (path) => {
      const r = await readPackageFiles(dir, path, limits);
      expect(!r.ok && r.failure.reason).toBe(Reason.PathNotFound);
    },
  );

  it('an invalid path → InvalidPath', async () => {
    const r = await readPackageFiles(dir, '../etc', limits);
    expect(!r.ok && r.failure.reason).toBe(Reason.InvalidPath);
  });

  it('per-file limit → ArtifactTooLarge naming the file, never its content', async () => {
    const r = await readPackageFiles(dir, 'big', limits);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure.reason).toBe(Reason.ArtifactTooLarge);
    expect(r.failure.message).toContain('"big/large.yaml"');
    expect(r.failure.message).not.toContain(MARKER);
  });

  it('total and count limits → ArtifactTooLarge', async () => {
    const total = await readPackageFiles(dir, 'total', limits);
    expect(!total.ok && total.failure.reason).toBe(Reason.ArtifactTooLarge);
    expect(!total.ok && total.failure.message).not.toContain(MARKER);
    const count = await readPackageFiles(dir, 'many', { ...limits, maxFiles: 5 });
    expect(!count.ok && count.failure.reason).toBe(Reason.ArtifactTooLarge);
    expect((await readPackageFiles(dir, 'many', { ...limits, maxFiles: 6 })).ok).toBe(true);
  });

  it('skips .git directories', async () => {
    const plain = await mkdtemp(join(tmpdir(), 'psync-pkg-'));
    try {
      await mkdir(join(plain, 'app', '.git'), { recursive: true });
      await writeFile(join(plain, 'app', '.git', 'config.yaml'), 'x: 1\n');
      await writeFile(join(plain, 'app', 'cm.yaml'), 'cm: 1\n');
      await symlink('/etc', join(plain, 'app', '.git', 'escape'));
      expect(await readPackageFiles(plain, 'app', limits)).toEqual({
        ok: true,
        value: [{ path: 'cm.yaml', content: 'cm: 1\n' }],
      });
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });
});
