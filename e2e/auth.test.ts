/**
 * Private repositories through the controller: HTTP basic auth and SSH key auth with credentials from a
 * Secret in the PackageSync's namespace; wrong credentials fail with a reason and no secret in sight.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kube } from './support/cluster.ts';
import { waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import type { SpecInput } from '../src/api/packagesync.ts';

const PASSWORD = 's3cr3t-Pa55word';
let env: GitEnvWithController;

beforeAll(async () => {
  env = await startGitEnv({}, { auth: { username: 'platform', password: PASSWORD }, ssh: true });
  await env.repo('private', {
    'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: private}\ndata: {k: v}\n',
  });
});

afterAll(async () => {
  await env?.dispose();
});

async function secret(ns: string, name: string, data: Record<string, string>): Promise<void> {
  const client = await kube();
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: data },
  });
}

describe('git credentials from a Secret', () => {
  it('fetches over HTTP with basic auth', async () => {
    const ns = await env.namespace('e2e-basic');
    await secret(ns, 'git-auth', { username: 'platform', password: PASSWORD });
    await env.sync(ns, 'basic', {
      source: { url: env.server.url('private'), secretRef: { name: 'git-auth' } },
    });
    expect((await waitReady(ns, 'basic')).status?.lastAppliedRevision).toMatch(/^main@sha1:/);
  });

  it('fails with AuthenticationFailed on a wrong password, never showing it', async () => {
    const ns = await env.namespace('e2e-basic-wrong');
    await secret(ns, 'git-auth', { username: 'platform', password: 'wrong-Pa55word' });
    await env.sync(ns, 'wrong', {
      source: { url: env.server.url('private'), secretRef: { name: 'git-auth' } },
    });
    const ps = await waitCondition(ns, 'wrong', 'Ready', 'False', 'AuthenticationFailed');
    expect(JSON.stringify(ps.status)).not.toContain('wrong-Pa55word');
    expect(env.controller.logs.join('\n')).not.toContain('wrong-Pa55word');
  });

  it('fails with AuthSecretNotFound when the Secret is missing, without trying anonymously', async () => {
    const ns = await env.namespace('e2e-nosecret');
    await env.sync(ns, 'nosecret', {
      source: { url: env.server.url('private'), secretRef: { name: 'absent' } },
    });
    const ps = await waitCondition(ns, 'nosecret', 'Ready', 'False', 'AuthSecretNotFound');
    expect(ps.status?.conditions?.[0]?.message).toContain(`${ns}/absent`);
  });

  it('reads the Secret only from its own namespace: the same name elsewhere → AuthSecretNotFound, git never asked', async () => {
    const elsewhere = await env.namespace('e2e-secret-elsewhere');
    const ns = await env.namespace('e2e-secret-here');
    // the right credentials, in another namespace, and a secretRef that tries to point there
    await secret(elsewhere, 'git-auth', { username: 'platform', password: PASSWORD });
    const url = env.server.url('never-asked');
    const source = { url, secretRef: { name: 'git-auth', namespace: elsewhere } } as SpecInput['source'];
    await env.sync(ns, 'elsewhere', { source, retryInterval: '2s' });
    const ps = await waitCondition(ns, 'elsewhere', 'Ready', 'False', 'AuthSecretNotFound');
    expect(ps.status?.conditions?.[0]?.message).toContain(`Secret ${ns}/git-auth`);
    expect(ps.status?.conditions?.[0]?.message).not.toContain(elsewhere);
    await new Promise((r) => setTimeout(r, 3000)); // a retry or two: still no anonymous attempt
    expect(env.server.requests.filter((r) => r.path.includes('never-asked'))).toEqual([]);
  });

  it('fetches over SSH with a key and known_hosts', async () => {
    const ns = await env.namespace('e2e-ssh');
    await secret(ns, 'ssh-auth', { identity: env.ssh.clientKey, known_hosts: env.ssh.knownHosts });
    await env.sync(ns, 'ssh', {
      source: { url: env.ssh.url('private'), secretRef: { name: 'ssh-auth' } },
    });
    expect((await waitReady(ns, 'ssh')).status?.lastAppliedRevision).toMatch(/^main@sha1:/);
  });

  it('refuses an SSH key the server does not accept', async () => {
    const ns = await env.namespace('e2e-ssh-wrong');
    await secret(ns, 'ssh-auth', { identity: env.ssh.wrongKey, known_hosts: env.ssh.knownHosts });
    await env.sync(ns, 'sshwrong', {
      source: { url: env.ssh.url('private'), secretRef: { name: 'ssh-auth' } },
    });
    const ps = await waitCondition(ns, 'sshwrong', 'Ready', 'False', 'AuthenticationFailed');
    expect(JSON.stringify(ps.status)).not.toContain('PRIVATE KEY');
  });
});
