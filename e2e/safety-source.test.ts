/**
 * Hostile sources through the real controller: each bad URL, ref, path, package or secret surfaces on
 * its PackageSync as Ready=False with the contract's reason, and nothing of it is applied. The unit
 * tests in test/git cover the whole matrix against the git adapter; this covers the wiring.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpecInput } from '../src/api/packagesync.ts';
import { kube } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition, type ControllerHandle } from './support/controller.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { configMap, ready } from './support/safety.ts';

let controller: ControllerHandle;
let strict: ControllerHandle;
let fx: GitEnv;
let blackhole: Server;
const sockets = new Set<Socket>();

beforeAll(async () => {
  fx = await startGitEnv(false);
  // a git server that accepts connections and never answers
  blackhole = createServer((s) => sockets.add(s));
  await new Promise<void>((r) => blackhole.listen(0, '127.0.0.1', () => r()));
  // 8s: a package path's checkout is two fetches (trees, then its blobs: docs/monorepos.md), on a loaded CI box
  controller = await fx.startController({ args: ['--max-files', '20', '--git-timeout', '8s'] });
  strict = await fx.startController({ allowInsecureHttp: false });
});

afterAll(async () => {
  await fx?.dispose(); // the controllers first: none may reach the blackhole once it is closing
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => blackhole?.close(() => r()));
});

const marker = join(tmpdir(), `psync-pwned-${process.pid}-${Date.now()}`);

describe('hostile sources', () => {
  it('each surfaces as Ready=False with its reason, before anything is applied', async () => {
    const ns = await fx.namespace('src');
    const good = { 'app/cm.yaml': configMap('never-applied', { k: 'v' }) };
    const { url } = await fx.repo('src-good', good);
    const escapeDir = await fx.repo('src-escape-dir', { ...good, linked: { symlink: '/etc' } });
    const escapeFile = await fx.repo('src-escape-file', {
      ...good,
      'app/passwd.yaml': { symlink: '/etc/passwd' },
    });
    const many = Object.fromEntries(
      Array.from({ length: 25 }, (_, i) => [`app/cm-${i}.yaml`, configMap(`never-${i}`, { k: 'v' })]),
    );
    const big = await fx.repo('src-many', many);
    const port = (blackhole.address() as AddressInfo).port;
    await (
      await kube()
    ).request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: { metadata: { name: 'wrong-keys' }, stringData: { token: 'x', user: 'y' } },
    });

    const cases: [string, SpecInput['source'], string, string?][] = [
      ['file-url', { url: 'file:///etc' }, 'InvalidURL', 'uses the "file" scheme'],
      ['ext-helper', { url: `ext::sh -c touch% ${marker}` }, 'InvalidURL'],
      [
        'password-in-url',
        { url: 'https://alice:hunter2@git.example.com/x.git' },
        'InvalidURL',
        'must not contain a password',
      ],
      ['local-path', { url: '/srv/git/repo.git' }, 'InvalidURL', 'local path'],
      ['option-url', { url: '--upload-pack=touch' }, 'InvalidURL'],
      ['option-branch', { url, ref: { branch: '--upload-pack=touch' } }, 'InvalidRef', 'starts with "-"'],
      ['dotdot-tag', { url, ref: { tag: 'v1..2' } }, 'InvalidRef', 'contains ".."'],
      [
        'password-behind-encoded-colon',
        { url: 'https://alice%3Ahunter2@git.example.com/x.git' },
        'InvalidURL',
        'must not contain a password',
      ],
      ['git-dir', { url, path: '.git' }, 'InvalidPath', 'must not point into .git'],
      ['git-dir-nested', { url, path: './app/.git/' }, 'InvalidPath', 'must not point into .git'],
      // not refused at admission: the API server stores them, the controller names the reason
      ['dotdot-path', { url, path: 'app/../..' }, 'InvalidPath', 'must not contain ".." segments'],
      ['absolute-path', { url, path: '/etc' }, 'InvalidPath', 'must be relative'],
      ['short-commit', { url, ref: { commit: 'a'.repeat(39) } }, 'InvalidRef', '40 or 64 hex'],
      ['empty-url', { url: '' }, 'InvalidURL', 'is empty'],
      ['empty-branch', { url, ref: { branch: '' } }, 'InvalidRef', 'not a valid git ref name: empty'],
      ['long-commit', { url, ref: { commit: 'a'.repeat(41) } }, 'InvalidRef', '40 or 64 hex'],
      ['missing-path', { url, path: 'nowhere' }, 'PathNotFound', 'path "nowhere" does not exist'],
      ['escape-dir', { url: escapeDir.url, path: 'linked' }, 'PathEscape', 'resolves outside the repository'],
      // through the symlink to something absent outside: still an escape, so the host's files cannot be probed
      [
        'escape-middle',
        { url: escapeDir.url, path: 'linked/psync-no-such-dir' },
        'PathEscape',
        'resolves outside the repository',
      ],
      ['escape-file', { url: escapeFile.url, path: 'app' }, 'PathEscape', '"app/passwd.yaml" is a symlink'],
      ['too-many', { url: big.url, path: 'app' }, 'ArtifactTooLarge', 'more than 20 manifest files'],
      ['hanging', { url: `http://127.0.0.1:${port}/never.git` }, 'SourceTimeout', 'timed out after 8s'],
      ['no-secret', { url, secretRef: { name: 'absent' } }, 'AuthSecretNotFound', `Secret ${ns}/absent`],
      ['wrong-keys', { url, secretRef: { name: 'wrong-keys' } }, 'InvalidAuthSecret', 'has none of the keys'],
      ['scp-no-key', { url: 'git@127.0.0.1:repo.git' }, 'InvalidAuthSecret', 'ssh sources need a secretRef'],
    ];
    // dot segments would make the URL name the namespace or the Secret list instead of a Secret: since the CRD's
    // name patterns (issue 35) the API server refuses them at admission, naming the field
    for (const [name, secret] of [
      ['dotdot-secret', '..'],
      ['dot-secret', '.'],
    ] as const) {
      await expect(
        createPackageSync(packageSync(ns, name, controller.shard, { source: { url, secretRef: { name: secret } } })),
      ).rejects.toThrow(/spec\.source\.secretRef\.name/);
    }
    for (const [name, source] of cases) {
      await createPackageSync(packageSync(ns, name, controller.shard, { source, retryInterval: '1m' }));
    }
    for (const [name, , reason, words] of cases) {
      const ps = await waitCondition(ns, name, 'Ready', 'False', reason);
      if (words) expect(ready(ps)?.message, name).toContain(words);
      expect(ps.status?.inventory?.entries ?? [], name).toEqual([]);
      expect(ps.status?.lastAppliedRevision, name).toBeUndefined();
      expect(JSON.stringify(ps.status), name).not.toContain('hunter2');
      expect(JSON.stringify(ps.status), name).not.toContain('root:x:0');
    }
    const objects = await (
      await kube()
    ).request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/configmaps`, {
      query: { labelSelector: 'packagesync.io/namespace' },
    });
    expect(objects.items).toEqual([]);
    expect(existsSync(marker)).toBe(false);
    expect(controller.logs.join('\n')).not.toContain('hunter2');
  });
});

describe('--allow-insecure-http', () => {
  it('without it, http:// is InvalidURL; https and the scp form are still accepted', async () => {
    const ns = await fx.namespace('src-strict');
    const { url } = await fx.repo('src-strict', { 'cm.yaml': configMap('c', { k: 'v' }) });
    const cases: [string, string, string, string][] = [
      ['http', url, 'InvalidURL', 'uses plain http'],
      ['https', 'https://127.0.0.1:1/x.git', 'FetchFailed', 'cannot reach the git server'],
      ['scp', 'git@127.0.0.1:x.git', 'InvalidAuthSecret', 'ssh sources need a secretRef'],
    ];
    for (const [name, u] of cases) {
      await createPackageSync(packageSync(ns, name, strict.shard, { source: { url: u }, retryInterval: '1m' }));
    }
    for (const [name, , reason, words] of cases) {
      expect(ready(await waitCondition(ns, name, 'Ready', 'False', reason))?.message, name).toContain(words);
    }
  });
});
