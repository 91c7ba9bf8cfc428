import { chmod, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reason } from '../../src/api/reasons.ts';
import { createGitSource } from '../../src/adapters/git/index.ts';
import type { GitSourceConfig } from '../../src/adapters/git/index.ts';
import { commitFiles, startGitFixture, tag } from '../support/git/index.ts';
import type { GitFixture, GitHttpServer } from '../support/git/index.ts';

describe('the engine SourcePort over git', () => {
  let repos: GitFixture;
  let server: GitHttpServer;
  let config: GitSourceConfig;
  let head: string;
  const credentials = { username: 'ci', password: 'ci-password' };
  const signal = () => AbortSignal.timeout(30_000);

  beforeAll(async () => {
    repos = await startGitFixture();
    const repo = await repos.createRepo('platform');
    const v1 = await commitFiles(
      repo,
      'main',
      { 'apps/web/deploy.yaml': 'kind: Deployment\n', 'apps/web/svc.yaml': 'kind: Service\n' },
      'v1',
    );
    await tag(repo, 'v1.0.0', v1, { annotated: true });
    head = await commitFiles(repo, 'main', { 'apps/web/svc.yaml': null }, 'drop the service');
    server = await repos.serveHttp(credentials);
    config = {
      gitCacheDir: repos.cacheRoot,
      gitTimeout: '20s',
      allowInsecureHttp: true,
      maxFiles: 100,
      maxFileBytes: 1 << 20,
      maxTotalBytes: 1 << 22,
    };
  });

  afterAll(async () => {
    await repos?.dispose();
  });

  it('sweeps crash leftovers at start-up', async () => {
    await mkdir(join(repos.cacheRoot, 'tmp', 'op-stale'), { recursive: true });
    await writeFile(join(repos.cacheRoot, 'tmp', 'op-stale', 'password'), 'x');
    await createGitSource(config, pino({ level: 'silent' }));
    expect(await readdir(join(repos.cacheRoot, 'tmp'))).toEqual([]);
  });

  it('keeps the cache root private: made 0700, and refused when others may write it or it is a symlink', async () => {
    const base = await mkdtemp(join(tmpdir(), 'psync-root-'));
    const log = pino({ level: 'silent' });
    try {
      const fresh = join(base, 'fresh');
      await createGitSource({ ...config, gitCacheDir: fresh }, log);
      expect((await stat(fresh)).mode & 0o777).toBe(0o700);

      const readable = join(base, 'readable');
      await mkdir(readable, { mode: 0o755 });
      await chmod(readable, 0o755);
      await createGitSource({ ...config, gitCacheDir: readable }, log);
      expect((await stat(readable)).mode & 0o777).toBe(0o700);

      const shared = join(base, 'shared');
      await mkdir(shared);
      await chmod(shared, 0o777);
      await expect(createGitSource({ ...config, gitCacheDir: shared }, log)).rejects.toThrow('writable by others');

      const linked = join(base, 'linked');
      await symlink(fresh, linked);
      await expect(createGitSource({ ...config, gitCacheDir: linked }, log)).rejects.toThrow('not a directory');
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it('resolves, fetches and reads the package: revision and package-relative files', async () => {
    const source = await createGitSource(config, pino({ level: 'silent' }));
    const spec = { url: server.url('platform'), ref: { branch: 'main' }, path: './apps/web/' };
    expect(await source.fetch(spec, credentials, signal())).toEqual({
      ok: true,
      value: {
        revision: `main@sha1:${head}`,
        commit: head,
        files: [{ path: 'deploy.yaml', content: 'kind: Deployment\n' }],
        checkoutRoot: expect.any(String),
        packagePath: 'apps/web',
        pathRevision: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        samePackageAt: expect.any(Function),
      },
    });
    const tagged = await source.fetch({ ...spec, ref: { tag: 'v1.0.0' } }, credentials, signal());
    expect(tagged.ok && tagged.value.files.map((f) => f.path)).toEqual(['deploy.yaml', 'svc.yaml']);
    expect(source.fetcher.stats().fetches).toBe(2);
  });

  it('reads the files only when asked, with deferFiles (a settled check that stops before rendering reads none)', async () => {
    const source = await createGitSource(config, pino({ level: 'silent' }));
    const spec = { url: server.url('platform'), ref: { branch: 'main' }, path: './apps/web/' };
    const deferred = await source.fetch(spec, credentials, signal(), { deferFiles: true });
    expect(deferred.ok && deferred.value.files).toEqual([]);
    expect(deferred.ok && deferred.value.revision).toBe(`main@sha1:${head}`);
    const files = deferred.ok ? await deferred.value.readFiles!() : undefined;
    expect(files).toEqual({ ok: true, value: [{ path: 'deploy.yaml', content: 'kind: Deployment\n' }] });
    const eager = await source.fetch(spec, credentials, signal());
    expect(eager.ok && eager.value.readFiles).toBeUndefined();

    const missing = await source.fetch({ ...spec, path: 'apps/api' }, credentials, signal(), { deferFiles: true });
    const read = missing.ok ? await missing.value.readFiles!() : missing;
    expect(!read.ok && read.failure.reason).toBe(Reason.PathNotFound);
  });

  it.each([
    ['a file:// URL', { url: 'file:///etc', path: '.' }, credentials, Reason.InvalidURL],
    ['an ext:: URL', { url: 'ext::sh -c id', path: '.' }, credentials, Reason.InvalidURL],
    [
      'a hostile branch',
      { url: 'URL', ref: { branch: '--upload-pack=id' }, path: '.' },
      credentials,
      Reason.InvalidRef,
    ],
    ['a path out of the repo', { url: 'URL', path: '../..' }, credentials, Reason.InvalidPath],
    [
      'a secret mixing kinds',
      { url: 'URL', path: '.' },
      { ...credentials, bearerToken: 't' },
      Reason.InvalidAuthSecret,
    ],
    ['a missing path', { url: 'URL', path: 'apps/api' }, credentials, Reason.PathNotFound],
    ['no credentials', { url: 'URL', path: '.' }, undefined, Reason.AuthenticationFailed],
  ])('%s → %s', async (_what, spec, creds, reason) => {
    const source = await createGitSource(config, pino({ level: 'silent' }));
    const r = await source.fetch(
      { ...spec, url: spec.url === 'URL' ? server.url('platform') : spec.url },
      creds,
      signal(),
    );
    expect(!r.ok && r.failure.reason).toBe(reason);
  });

  it('names the revision when the path is missing there', async () => {
    const source = await createGitSource(config, pino({ level: 'silent' }));
    const r = await source.fetch({ url: server.url('platform'), path: 'apps/api' }, credentials, signal());
    expect(!r.ok && r.failure.message).toContain(`main@sha1:${head}`);
  });
});
