/**
 * The webhook receiver end to end: a real controller process serving --webhook-bind-address, a real git
 * server, the real control plane. push → webhook → applied, long before the PackageSync's 1h interval.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles } from '../test/support/git/index.ts';
import { WEBHOOK_SECRET_ANNOTATION } from '../src/server/webhook.ts';
import { eventually, get, kube } from './support/cluster.ts';
import { createPackageSync, packageSync, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';

const TOKEN = 'e2e-webhook-token-0123456789';
let env: GitEnvWithController;
let port: number;
let ns: string;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return p;
}

beforeAll(async () => {
  port = await freePort();
  env = await startGitEnv({ args: ['--webhook-bind-address', `127.0.0.1:${port}`] });
  ns = await env.namespace('e2e-hook');
  await (
    await kube()
  ).request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'hook' }, stringData: { token: TOKEN } },
  });
});

afterAll(async () => {
  await env?.dispose();
});

const configMap = (color: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {color: ${color}}\n`;

const colorIn = async (namespace: string): Promise<string | undefined> =>
  (await get(`/api/v1/namespaces/${namespace}/configmaps/settings`))?.data?.color;

const hook = (name: string, headers: Record<string, string>, body: string) =>
  fetch(`http://127.0.0.1:${port}/hook/${ns}/${name}`, { method: 'POST', headers, body });

describe('the webhook receiver', () => {
  it('applies a push at once: GitHub signature, then GitLab token; refuses a wrong signature', async () => {
    const { repo, url } = await env.repo('hooked', { 'app/cm.yaml': configMap('blue') });
    const ps = packageSync(ns, 'app', env.controller.shard, {
      source: { url, ref: { branch: 'main' }, path: 'app' },
      interval: '1h',
      timeout: '1m',
    });
    ps.metadata.annotations = { [WEBHOOK_SECRET_ANNOTATION]: 'hook' };
    await createPackageSync(ps);
    await waitReady(ns, 'app');
    expect(await colorIn(ns)).toBe('blue');

    // a push signed with another token: refused, nothing triggered
    await commitFiles(repo, 'main', { 'app/cm.yaml': configMap('green') }, 'green');
    const body = JSON.stringify({ ref: 'refs/heads/main', repository: { clone_url: url } });
    const forged = `sha256=${createHmac('sha256', 'not-the-token').update(body).digest('hex')}`;
    const refused = await hook('app', { 'x-github-event': 'push', 'x-hub-signature-256': forged }, body);
    expect(refused.status).toBe(404); // the same answer as for a PackageSync that does not exist (issue 35)

    // GitHub: signed push → reconciled now (the interval is 1h)
    const signature = `sha256=${createHmac('sha256', TOKEN).update(body).digest('hex')}`;
    const accepted = await hook('app', { 'x-github-event': 'push', 'x-hub-signature-256': signature }, body);
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toEqual({ triggered: [`${ns}/app`] });
    await eventually('green applied', async () => (await colorIn(ns)) === 'green', { timeoutMs: 20_000 });

    // GitLab: push hook with X-Gitlab-Token, the repository named by its ssh and http URLs
    await commitFiles(repo, 'main', { 'app/cm.yaml': configMap('red') }, 'red');
    const gitlab = JSON.stringify({
      ref: 'refs/heads/main',
      project: { git_ssh_url: 'git@127.0.0.1:hooked.git', git_http_url: url },
    });
    const viaGitlab = await hook('app', { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': TOKEN }, gitlab);
    expect(viaGitlab.status).toBe(202);
    await eventually('red applied', async () => (await colorIn(ns)) === 'red', { timeoutMs: 20_000 });

    expect(env.controller.logs.join('\n')).not.toContain(TOKEN);
    expect(env.controller.logs.some((l) => l.includes('webhook call refused'))).toBe(true);
  });
});
