/**
 * spec.source.verify through the real controller, the real git server and the real git: commits and tags
 * signed in the test with ssh-keygen (gpg.format=ssh) and gpg keys, verified against the keys of a Secret.
 * A signed commit is applied; an unsigned one, or one signed by a key the Secret does not hold, is refused
 * with VerificationFailed naming the commit and the allowed key, and what was applied stays.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpecInput } from '../src/api/packagesync.ts';
import { conditionOf } from '../src/core/status.ts';
import { sshFingerprints } from '../src/core/signers.ts';
import { tag, type TestRepo } from '../test/support/git/index.ts';
import { gpgSigner, signedCommit, signedTag, sshSigner, type Signer } from '../test/support/git/signing.ts';
import { eventually, kube } from './support/cluster.ts';
import { getPackageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, configMap, get, trigger } from './support/safety.ts';

let env: GitEnvWithController;
let ns: string;
let ssh: Signer;
let sshOther: Signer;
let gpg: Signer;
let gpgOther: Signer;

beforeAll(async () => {
  env = await startGitEnv();
  ns = await env.namespace('verify');
  [ssh, sshOther, gpg, gpgOther] = await Promise.all([
    sshSigner('alice@example.com'),
    sshSigner('mallory@example.com'),
    gpgSigner('alice@example.com'),
    gpgSigner('mallory@example.com'),
  ]);
  const client = await kube();
  const secret = (name: string, data: Record<string, string>) =>
    client.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: { metadata: { name }, stringData: data } });
  await secret('ssh-signers', ssh.secretData);
  await secret('gpg-signers', gpg.secretData);
}, 120_000);

afterAll(async () => {
  await env?.dispose();
  await Promise.all([ssh, sshOther, gpg, gpgOther].map((s) => s?.dispose()));
});

async function create(name: string, url: string, spec: Partial<SpecInput>): Promise<void> {
  await env.sync(ns, name, {
    targetNamespace: ns,
    interval: '1h',
    retryInterval: '2s',
    ...spec,
    source: { url, ...spec.source },
  });
}

const valueOf = async (name: string) => ((await get(cmPath(ns, name)))?.data as Record<string, string> | undefined)?.v;

async function refused(name: string, pattern: RegExp, applied: string, value: string): Promise<void> {
  // the refusal of this commit, not of an earlier one
  const ps = await eventually(`${name} refused: ${pattern}`, async () => {
    const got = await getPackageSync(ns, name);
    const ready = conditionOf(got?.status, 'Ready');
    return ready?.reason === 'VerificationFailed' && pattern.test(ready.message) && got;
  });
  expect(conditionOf(ps.status, 'Stalled')?.status).toBe('True');
  expect(ps.status?.lastAppliedRevision).toBe(applied);
  expect(await valueOf(name)).toBe(value); // what was applied stands
}

describe('spec.source.verify, mode HEAD', () => {
  for (const [kind, signer, other, secretName] of [
    ['SSH', () => ssh, () => sshOther, 'ssh-signers'],
    ['GPG', () => gpg, () => gpgOther, 'gpg-signers'],
  ] as const) {
    it(`applies a commit signed by an allowed ${kind} key; refuses an unsigned one and one signed by another key`, async () => {
      const name = `head-${kind.toLowerCase()}`;
      const { repo, url } = await env.repo(name, { 'cm.yaml': configMap(name, { v: 'one' }) });
      const first = await signedCommit(repo, 'main', { 'cm.yaml': configMap(name, { v: 'signed' }) }, signer());
      await create(name, url, {
        source: { url, ref: { branch: 'main' }, verify: { secretRef: { name: secretName } } },
      });
      const applied = `main@sha1:${first}`;
      await waitReady(ns, name, (ps) => ps.status?.lastAppliedRevision === applied);
      expect(await valueOf(name)).toBe('signed');

      const unsigned = await env.commit(repo, { 'cm.yaml': configMap(name, { v: 'unsigned' }) });
      await trigger(ns, name);
      const allowed = kind === 'SSH' ? sshFingerprints(ssh.secretData.allowed_signers!)[0]! : 'GPG [0-9A-F]{40}';
      await refused(
        name,
        new RegExp(`commit ${unsigned} is not signed; allowed keys: .*${allowed.replace(/[+/]/g, '\\$&')}`),
        applied,
        'signed',
      );

      const forged = await signedCommit(repo, 'main', { 'cm.yaml': configMap(name, { v: 'forged' }) }, other());
      await trigger(ns, name);
      await refused(
        name,
        new RegExp(
          `commit ${forged} is (signed by ${kind} key \\S+, which is not allowed|not signed by an allowed ${kind} key)`,
        ),
        applied,
        'signed',
      );
      const status = JSON.stringify((await getPackageSync(ns, name))?.status);
      expect(status).not.toContain('BEGIN'); // no key material in status
    }, 120_000);
  }
});

describe('spec.source.verify, tag modes', () => {
  async function tagged(
    name: string,
    sign: boolean,
    signCommit = true,
  ): Promise<{ repo: TestRepo; url: string; sha: string }> {
    const made = await env.repo(name, {});
    const files = { 'cm.yaml': configMap(name, { v: 'tagged' }) };
    const sha = signCommit ? await signedCommit(made.repo, 'main', files, ssh) : await env.commit(made.repo, files);
    if (sign) await signedTag(made.repo, 'v1.0.0', sha, ssh);
    else await tag(made.repo, 'v1.0.0', sha, { annotated: true });
    return { ...made, sha };
  }

  it('TagAndHEAD applies a signed tag on a signed commit', async () => {
    const { url, sha } = await tagged('tag-signed', true);
    await create('tag-signed', url, {
      source: { url, ref: { tag: 'v1.0.0' }, verify: { mode: 'TagAndHEAD', secretRef: { name: 'ssh-signers' } } },
    });
    await waitReady(ns, 'tag-signed', (ps) => ps.status?.lastAppliedRevision === `v1.0.0@sha1:${sha}`);
    expect(await valueOf('tag-signed')).toBe('tagged');
  }, 60_000);

  it('TagAndHEAD refuses a signed tag on an unsigned commit; Tag alone (semver) accepts it', async () => {
    const { url, sha } = await tagged('tag-head', true, false);
    await create('tag-head', url, {
      source: { url, ref: { tag: 'v1.0.0' }, verify: { mode: 'TagAndHEAD', secretRef: { name: 'ssh-signers' } } },
    });
    const ps = await waitCondition(ns, 'tag-head', 'Ready', 'False', 'VerificationFailed');
    expect(conditionOf(ps.status, 'Ready')?.message).toMatch(new RegExp(`^commit ${sha} is not signed`));
    await create('tag-only', url, {
      source: { url, ref: { semver: '>=1.0.0' }, verify: { mode: 'Tag', secretRef: { name: 'ssh-signers' } } },
    });
    await waitReady(ns, 'tag-only', (p) => p.status?.lastAppliedRevision === `v1.0.0@sha1:${sha}`);
  }, 60_000);

  it('Tag refuses an unsigned annotated tag, and applies nothing', async () => {
    const { url } = await tagged('tag-unsigned', false);
    await create('tag-unsigned', url, {
      source: { url, ref: { tag: 'v1.0.0' }, verify: { mode: 'Tag', secretRef: { name: 'ssh-signers' } } },
    });
    const ps = await waitCondition(ns, 'tag-unsigned', 'Ready', 'False', 'VerificationFailed');
    expect(conditionOf(ps.status, 'Ready')?.message).toMatch(/^tag v1\.0\.0 is not signed; allowed keys: SSH SHA256:/);
    expect(ps.status?.lastAppliedRevision).toBeUndefined();
    expect(await get(cmPath(ns, 'tag-unsigned'))).toBeUndefined();
  }, 60_000);

  it('Tag on a branch ref is refused: there is no tag to verify', async () => {
    const { url } = await tagged('tag-branch', true);
    await create('tag-branch', url, {
      source: { url, ref: { branch: 'main' }, verify: { mode: 'Tag', secretRef: { name: 'ssh-signers' } } },
    });
    const ps = await waitCondition(ns, 'tag-branch', 'Ready', 'False', 'VerificationFailed');
    expect(conditionOf(ps.status, 'Ready')?.message).toMatch(/set ref\.tag or ref\.semver, or use mode HEAD/);
  }, 60_000);
});
