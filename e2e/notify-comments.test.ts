/**
 * A pull-request comment from the real controller (docs/adr/0043): a gitea Notifier with pullRequestComments, a
 * loopback HTTPS forge that answers Gitea's documented commit→pull-request lookup and takes the comment. The
 * comment lists what this revision's apply did, object by object (the engine's changes reach the Notifier through
 * Ports.observe.changes), and carries no Secret value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kube } from './support/cluster.ts';
import { SHARD_LABEL, waitReady } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { startNotifyReceiver, type NotifyReceiver } from '../test/support/notify-receiver.ts';
import { notifierCollectionPath } from '../src/controller/notify/notify-controller.ts';

const TOKEN = 'e2e-gitea-token-0003';
let env: GitEnvWithController;
let forge: NotifyReceiver;

beforeAll(async () => {
  env = await startGitEnv();
  forge = await startNotifyReceiver();
  // Gitea's API: GET /api/v1/repos/{owner}/{repo}/commits/{sha}/pull, POST .../statuses/{sha}, .../issues/7/comments
  forge.answer = (r) => {
    if (r.headers.authorization !== `token ${TOKEN}`) return { status: 401 };
    const sha = /^\/api\/v1\/repos\/org\/app\/commits\/([0-9a-f]{40})\/pull$/.exec(r.path)?.[1];
    if (r.method === 'GET' && sha) {
      const pr = { number: 7, state: 'open', head: { sha } };
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(pr) };
    }
    if (
      r.method === 'POST' &&
      /^\/api\/v1\/repos\/org\/app\/(statuses\/[0-9a-f]{40}|issues\/7\/comments)$/.test(r.path)
    )
      return { status: 201 };
    return { status: 404 };
  };
});
afterAll(async () => {
  await env?.dispose();
  await forge?.close();
});

describe('a pull-request comment from the controller', () => {
  it("lists the objects this revision's apply created, by ref only", async () => {
    const ns = await env.namespace('e2e-notify-comment');
    const client = await kube();
    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'forge' },
        stringData: { token: TOKEN, 'ca.crt': forge.ca },
      },
    });
    await client.request('POST', notifierCollectionPath(ns), {
      body: {
        apiVersion: 'packagesync.io/v1alpha1',
        kind: 'Notifier',
        metadata: { name: 'forge', labels: { [SHARD_LABEL]: env.controller.shard } },
        spec: {
          type: 'gitea',
          address: `${forge.url}/org/app`,
          secretRef: { name: 'forge' },
          pullRequestComments: true,
        },
      },
    });
    const { url, sha } = await env.repo('notify-comment', {
      'a.yaml': configMap('a', { k: 'v' }),
      'b.yaml': configMap('b', { password: 'hunter2-not-for-comments' }),
    });
    await env.sync(ns, 'web', { source: { url } });
    await waitReady(ns, 'web');
    const comment = await eventually('the comment', async () =>
      forge.requests.find((r) => r.method === 'POST' && r.path.endsWith('/issues/7/comments') && r.answered === 201),
    );
    const body = String(comment.json.body);
    expect(body).toContain('### PackageSync `' + `${ns}/web\`: ✅ healthy`);
    expect(body).toContain(`Revision \`main@sha1:${sha}\``);
    expect(body).toContain('<details><summary>2 objects changed</summary>');
    expect(body).toContain(`| + | created | \`ConfigMap/${ns}/a\` |`);
    expect(body).toContain(`| + | created | \`ConfigMap/${ns}/b\` |`);
    expect(body).not.toContain('hunter2');
    expect(body).not.toContain(TOKEN);
  });
});
