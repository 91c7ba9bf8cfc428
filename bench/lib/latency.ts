/**
 * Change latency of a 10-object package: from the commit landing in the repository to the change being
 * live in the cluster, once by polling (a short spec.interval) and once by the webhook receiver (a
 * GitHub-style signed push right after the commit, interval 10m so polling cannot be what applied it).
 */
import { createHmac } from 'node:crypto';
import { isNotFound } from '../../src/adapters/kube/client.ts';
import { WEBHOOK_SECRET_ANNOTATION } from '../../src/server/webhook.ts';
import { createNamespace, deleteNamespace } from './cluster.ts';
import { CHANGE_PATH, commitChange } from './fixtures.ts';
import { dropFinalizers, type BenchContext } from './fleet.ts';
import { startPackageSync, waitServing } from './procs.ts';
import { createAll, isReady, packageSyncOf, PS_PATH, watchUntil } from './units.ts';

export interface LatencyResult {
  pollIntervalSeconds: number;
  polling: number[];
  webhook: number[];
}

const POLL_INTERVAL = 5;
const TOKEN = 'bench-webhook-token';

export async function runLatency(ctx: BenchContext, samples: number): Promise<LatencyResult> {
  const { client } = ctx.harness;
  const git = ctx.git.change;
  const pollNs = `${ctx.prefix}latency-poll`;
  const hookNs = `${ctx.prefix}latency-hook`;
  const webhookPort = ctx.portBase + 2;
  let rev = 1;
  await commitChange(git.repo, rev);
  for (const ns of [pollNs, hookNs]) await createNamespace(client, ns);
  await client.request('POST', `/api/v1/namespaces/${hookNs}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'webhook' }, stringData: { token: TOKEN } },
  });
  const proc = startPackageSync({
    kubeconfig: ctx.kubeconfig,
    concurrency: ctx.concurrency,
    metricsPort: ctx.portBase + 3,
    webhookPort,
    tag: 'latency',
  });
  try {
    await waitServing(proc);
    const unit = (interval: string) => ({ name: 'change', url: git.url, path: CHANGE_PATH, interval, wait: true });
    const ready = [pollNs, hookNs].map((ns) => watchUntil(client, PS_PATH(ns), 1, isReady, 120_000));
    await createAll(client, [
      { path: PS_PATH(pollNs), body: packageSyncOf(pollNs, unit(`${POLL_INTERVAL}s`)) },
      {
        path: PS_PATH(hookNs),
        body: packageSyncOf(hookNs, unit('10m'), { [WEBHOOK_SECRET_ANNOTATION]: 'webhook' }),
      },
    ]);
    await Promise.all(ready.map((r) => r.ready));
    for (const r of ready) r.stop();

    const polling: number[] = [];
    for (let i = 0; i < samples; i++) {
      // a random phase against the poll timer, as a real push has
      await sleep(Math.random() * POLL_INTERVAL * 1000);
      rev++;
      await commitChange(git.repo, rev);
      const t0 = performance.now();
      await appliedRev(ctx, pollNs, rev);
      polling.push((performance.now() - t0) / 1000);
    }

    const webhook: number[] = [];
    for (let i = 0; i < samples; i++) {
      await sleep(300);
      rev++;
      await commitChange(git.repo, rev);
      const t0 = performance.now();
      await postPush(webhookPort, git.url, hookNs, 'change');
      await appliedRev(ctx, hookNs, rev);
      webhook.push((performance.now() - t0) / 1000);
    }
    return { pollIntervalSeconds: POLL_INTERVAL, polling, webhook };
  } finally {
    await proc.stop();
    for (const ns of [pollNs, hookNs]) {
      await dropFinalizers(client, PS_PATH(ns));
      await deleteNamespace(client, ns).catch(() => undefined);
    }
  }
}

/** What GitHub sends on a push: the repository's URLs, signed with the shared token. */
async function postPush(port: number, url: string, namespace: string, name: string): Promise<void> {
  const body = JSON.stringify({ ref: 'refs/heads/main', repository: { clone_url: url, html_url: url } });
  const signature = `sha256=${createHmac('sha256', TOKEN).update(body).digest('hex')}`;
  const res = await fetch(`http://127.0.0.1:${port}/hook/${namespace}/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': signature },
    body,
  });
  if (res.status !== 202) throw new Error(`webhook answered ${res.status}: ${await res.text()}`);
}

/** Polls (every 20 ms) until every ConfigMap of the package carries revision `rev`. */
async function appliedRev(ctx: BenchContext, ns: string, rev: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const list = await ctx.harness.client.request<{ items: { data?: { rev?: string } }[] }>(
        'GET',
        `/api/v1/namespaces/${ns}/configmaps`,
        { query: { labelSelector: 'packagesync.io/name=change' } },
      );
      if (list.items.length >= 10 && list.items.every((c) => c.data?.rev === String(rev))) return;
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    if (Date.now() > deadline) throw new Error(`revision ${rev} not applied in ${ns} within ${timeoutMs / 1000}s`);
    await sleep(20);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
