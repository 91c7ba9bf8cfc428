/**
 * Slack threads and pull-request comments from the real controller, each against a loopback HTTPS receiver that
 * answers as the service's documented API does:
 * - a slack Notifier with a bot token (docs/adr/0040): one revision's messages in one thread, also after the
 *   controller restarted (the thread's ts is kept with the outbox);
 * - a gitea Notifier with pullRequestComments (docs/adr/0043): the comment lists what this revision's apply did,
 *   object by object (the engine's changes reach the Notifier through Ports.observe.changes), and carries no
 *   Secret value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kube } from './support/cluster.ts';
import { patchPackageSync, SHARD_LABEL, waitCondition, waitReady } from './support/controller.ts';
import { readOutbox } from './support/notifier.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { startNotifyReceiver, type NotifyReceiver, type ReceivedRequest } from '../test/support/notify-receiver.ts';
import { notifierCollectionPath } from '../src/controller/notify/notify-controller.ts';

const TOKEN = 'e2e-gitea-token-0003';
let env: GitEnvWithController;
let forge: NotifyReceiver;
const BOT = 'xoxb-e2e-bot-token-0004';
let slack: NotifyReceiver;

beforeAll(async () => {
  env = await startGitEnv();
  forge = await startNotifyReceiver();
  slack = await startNotifyReceiver();
  // Slack's chat.postMessage: Bearer token, JSON with charset, a channel and text; answers the channel's id and ts
  let n = 0;
  slack.answer = (r) => {
    const fine =
      r.method === 'POST' &&
      r.path === '/api/chat.postMessage' &&
      r.headers.authorization === `Bearer ${BOT}` &&
      r.headers['content-type'] === 'application/json; charset=utf-8' &&
      !!r.json.channel &&
      !!r.json.text;
    const body = fine
      ? { ok: true, channel: 'C0E2E', ts: `1700000000.${String(++n).padStart(6, '0')}` }
      : { ok: false, error: 'invalid_arguments' };
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  };
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
  await slack?.close();
});

describe('a slack Notifier with a bot token on the real controller', () => {
  it("threads one revision's messages under its first, also after a controller restart", async () => {
    const ns = await env.namespace('e2e-notify-slack');
    const client = await kube();
    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'bot' },
        stringData: { token: BOT, 'ca.crt': slack.ca },
      },
    });
    await client.request('POST', notifierCollectionPath(ns), {
      body: {
        apiVersion: 'packagesync.io/v1alpha1',
        kind: 'Notifier',
        metadata: { name: 'chat', labels: { [SHARD_LABEL]: env.controller.shard } },
        spec: {
          type: 'slack',
          address: `${slack.url}/api/chat.postMessage`,
          channel: '#deploys',
          secretRef: { name: 'bot' },
          events: ['started', 'healthy', 'failed', 'resolved'],
        },
      },
    });
    const { url } = await env.repo('notify-slack', { 'app/cm.yaml': configMap('a', { k: 'v' }) });
    await env.sync(ns, 'web', { source: { url, path: 'app' }, retryInterval: '1s' });
    await waitReady(ns, 'web');
    // this file's only slack Notifier: every request the receiver got is about ns/web
    const mine = () => slack.requests;
    const posted = (reqs: ReceivedRequest[]) => reqs.filter((r) => r.answered === 200);
    await eventually('started and healthy delivered, the thread kept', async () => {
      const o = await readOutbox(ns, 'chat');
      return o.state.outbox.length === 0 && o.state.threads?.web && posted(mine()).length >= 2;
    });
    // the same revision fails after a restart: its failure goes into the thread the first controller started
    await env.controller.restart();
    await patchPackageSync(ns, 'web', { spec: { source: { url, path: 'missing' } } });
    await waitCondition(ns, 'web', 'Ready', 'False', 'PathNotFound');
    const failure = await eventually('the failure in the thread', async () =>
      posted(mine()).find((r) => String(r.json.text).includes('PathNotFound')),
    );
    const first = posted(mine())[0]!;
    expect(first.json.thread_ts).toBeUndefined();
    expect(first.json.channel).toBe('#deploys');
    // the receiver answered the first post with ts …000001: every later message replies to it
    expect(failure.json.thread_ts).toBe('1700000000.000001');
    for (const reply of posted(mine()).slice(1)) {
      expect(reply.json.channel).toBe('C0E2E');
      expect(reply.json.thread_ts).toBe(failure.json.thread_ts);
    }
    expect(failure.json.reply_broadcast).toBe(true);
    expect(JSON.stringify((await readOutbox(ns, 'chat')).configMap)).not.toContain(BOT);
    expect(env.controller.logs.join('\n')).not.toContain(BOT);
  });
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
