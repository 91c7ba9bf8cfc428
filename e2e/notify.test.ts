/**
 * Deployment records on the real control plane (docs/adr/0040): a Notifier in the PackageSync's namespace, its
 * Secret (HMAC key, the receiver's CA), and a loopback HTTPS receiver that verifies every signature. A commit that
 * goes Ready is one record; a failure retried is one message, then "resolved"; the controller SIGKILLed while a
 * delivery hangs delivers it once after it is back (the outbox ConfigMap keeps it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kube } from './support/cluster.ts';
import { getPackageSync, patchPackageSync, waitCondition, waitReady, SHARD_LABEL } from './support/controller.ts';
import { notifiedNamespace as notifiedNamespaceOf, readOutbox } from './support/notifier.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { startNotifyReceiver, type NotifyReceiver, type ReceivedRequest } from '../test/support/notify-receiver.ts';
import { notifierCollectionPath } from '../src/controller/notify/notify-controller.ts';

const KEY = 'e2e-notify-hmac-key-0001';
let env: GitEnvWithController;
let receiver: NotifyReceiver;

beforeAll(async () => {
  env = await startGitEnv();
  receiver = await startNotifyReceiver({ hmacKey: KEY });
});
afterAll(async () => {
  await env?.dispose();
  await receiver?.close();
});

const notifiedNamespace = (prefix: string) => notifiedNamespaceOf(env, receiver, prefix, KEY);

const to = (ns: string) => receiver.requests.filter((r) => r.path === `/${ns}`);
const kinds = (reqs: ReceivedRequest[]) =>
  reqs.map((r) => String(r.json.type).replace('io.packagesync.deployment.', ''));

describe('deployment records to a webhook Notifier', () => {
  it('a commit that goes Ready: exactly one record, delivered signed, each message once, ending healthy', async () => {
    const ns = await notifiedNamespace('e2e-notify-ready');
    const { url, sha } = await env.repo('notify-ready', { 'cm.yaml': configMap('a', { k: 'v' }) });
    await env.sync(ns, 'web', { source: { url } });
    await waitReady(ns, 'web');
    const got = await eventually('the healthy message', async () => {
      const reqs = to(ns);
      return kinds(reqs).includes('healthy') && reqs;
    });
    expect(got.every((r) => r.signatureValid)).toBe(true);
    expect(new Set(got.map((r) => r.json.data.revision))).toEqual(new Set([`main@sha1:${sha}`]));
    expect(new Set(got.map((r) => r.json.data.commit))).toEqual(new Set([sha]));
    const ids = got.map((r) => r.json.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(kinds(got)[0]).toBe('started');
    expect(kinds(got).at(-1)).toBe('healthy');
    expect(kinds(got)).not.toContain('failed');
    // the outbox ConfigMap is owned by the Notifier and empty once everything is delivered
    const client = await kube();
    const cm = await eventually('the outbox emptied', async () => {
      const o = await readOutbox(ns);
      return o.state.outbox.length === 0 && o.configMap;
    });
    expect(cm.metadata.ownerReferences[0]!.kind).toBe('Notifier');
    // nothing secret in the outbox, the Notifier's status or the controller's logs
    expect(JSON.stringify(cm)).not.toContain(KEY);
    expect(JSON.stringify(await client.request('GET', `${notifierCollectionPath(ns)}/hook`))).not.toContain(KEY);
    expect(env.controller.logs.join('\n')).not.toContain(KEY);
  });

  it('a failure retried is one message (no repeat), then "resolved" once it is fixed', async () => {
    const ns = await notifiedNamespace('e2e-notify-fail');
    const { url } = await env.repo('notify-fail', { 'app/cm.yaml': configMap('a', { k: 'v' }) });
    await env.sync(ns, 'web', { source: { url, path: 'missing' }, retryInterval: '1s' });
    await waitCondition(ns, 'web', 'Ready', 'False', 'PathNotFound');
    // several retries fail the same way
    await eventually(
      'three failed attempts',
      async () => ((await getPackageSync(ns, 'web'))?.status?.history?.length ?? 0) >= 3,
      {
        timeoutMs: 60_000,
      },
    );
    await eventually('the failure message', async () => kinds(to(ns)).includes('failed'));
    expect(kinds(to(ns)).filter((k) => k === 'failed')).toHaveLength(1);
    const failure = to(ns).find((r) => r.json.type.endsWith('failed'))!;
    expect(failure.json.data).toMatchObject({ reason: 'PathNotFound' });
    expect(failure.json.data.message).toContain('missing');
    await patchPackageSync(ns, 'web', { spec: { source: { url, path: 'app' } } });
    await waitReady(ns, 'web');
    await eventually('resolved', async () => kinds(to(ns)).includes('resolved'));
    expect(kinds(to(ns)).filter((k) => k === 'failed')).toHaveLength(1);
    expect(kinds(to(ns)).filter((k) => k === 'resolved')).toHaveLength(1);
  });

  it('the controller SIGKILLed while a delivery hangs: after the restart every message is answered exactly once', async () => {
    const ns = await notifiedNamespace('e2e-notify-crash');
    const hangFor = `/${ns}`;
    const previous = receiver.answer;
    receiver.answer = (r) => (r.path === hangFor ? 'hang' : { status: 200 });
    try {
      const { url } = await env.repo('notify-crash', { 'cm.yaml': configMap('a', { k: 'v' }) });
      await env.sync(ns, 'web', { source: { url } });
      await eventually('a delivery hanging', async () => to(ns).length > 0);
      await waitReady(ns, 'web');
      await env.controller.restart();
      receiver.release(true);
      receiver.answer = () => ({ status: 200 });
      const got = await eventually(
        'the healthy message answered',
        async () => to(ns).some((r) => r.json.type.endsWith('healthy') && r.answered === 200) && to(ns),
        { timeoutMs: 90_000 },
      );
      const answered = got.filter((r) => r.answered === 200).map((r) => r.json.id);
      expect(new Set(answered).size).toBe(answered.length);
      // the message that hung was delivered after the restart, under its own id
      expect(answered).toContain(got[0]!.json.id);
      expect(got.every((r) => r.signatureValid)).toBe(true);
    } finally {
      receiver.answer = previous;
    }
  });

  it("tenancy: every message a Notifier sent is about its own namespace's PackageSyncs", () => {
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const r of receiver.requests) expect(r.path).toBe(`/${r.json.data.namespace}`);
  });

  it('a Notifier the schema refuses is refused at admission, naming the field; a bad template turns it not Ready', async () => {
    const ns = await env.namespace('e2e-notify-invalid');
    const client = await kube();
    const create = (name: string, spec: Record<string, unknown>) =>
      client.request('POST', notifierCollectionPath(ns), {
        body: {
          apiVersion: 'packagesync.io/v1alpha1',
          kind: 'Notifier',
          metadata: { name, labels: { [SHARD_LABEL]: env.controller.shard } },
          spec,
        },
      });
    await expect(create('email', { type: 'email', address: 'https://x.example/' })).rejects.toThrow(/spec.type/);
    await create('template', { type: 'generic', address: 'https://x.example/', template: { text: '{{ .token }}' } });
    const ready = await eventually('Ready=False naming the template', async () => {
      const n = await client.request<{
        status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
      }>('GET', `${notifierCollectionPath(ns)}/template`);
      return n.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'False');
    });
    expect(ready.reason).toBe('InvalidTemplate');
    expect(ready.message).toContain('spec.template.text: "{{ .token }}" is not a field');
  });
});
