/** Notifier fixtures the notification e2e files share: a generic Notifier on a test's shard, its outbox read back. */
import { eventually, kube } from './cluster.ts';
import { SHARD_LABEL } from './controller.ts';
import type { NotifyReceiver } from '../../test/support/notify-receiver.ts';
import { notifierCollectionPath } from '../../src/controller/notify/notify-controller.ts';
import { outboxName } from '../../src/adapters/kube/notifier-store.ts';
import type { NotifierState } from '../../src/core/notify/outbox.ts';

/**
 * A namespace with a generic Notifier `hook` pointed at the receiver, path /<namespace>, on env's shard (the
 * controller's, or the shard of the replicas a test started); its Secret holds the HMAC key and the receiver's CA.
 * Resolves once the Notifier is Ready.
 */
export async function notifiedNamespace(
  env: { namespace(prefix: string): Promise<string>; controller: { shard: string } },
  receiver: NotifyReceiver,
  prefix: string,
  hmacKey: string,
): Promise<string> {
  const ns = await env.namespace(prefix);
  const client = await kube();
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hook' },
      stringData: { token: hmacKey, 'ca.crt': receiver.ca },
    },
  });
  await client.request('POST', notifierCollectionPath(ns), {
    body: {
      apiVersion: 'packagesync.io/v1alpha1',
      kind: 'Notifier',
      metadata: { name: 'hook', labels: { [SHARD_LABEL]: env.controller.shard } },
      spec: { type: 'generic', address: `${receiver.url}/${ns}`, secretRef: { name: 'hook' } },
    },
  });
  await eventually('the Notifier Ready', async () => {
    const n = await client.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
      'GET',
      `${notifierCollectionPath(ns)}/hook`,
    );
    return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  });
  return ns;
}

/** The outbox ConfigMap of Notifier `name` in `ns`, and the state it stores. */
export async function readOutbox(
  ns: string,
  name = 'hook',
): Promise<{ configMap: { metadata: { ownerReferences: { kind: string }[] } }; state: NotifierState }> {
  const client = await kube();
  const c = await client.request<{
    data: Record<string, string>;
    metadata: { ownerReferences: { kind: string }[] };
  }>('GET', `/api/v1/namespaces/${ns}/configmaps/${outboxName(name)}`);
  return { configMap: c, state: JSON.parse(c.data['state.json']!) as NotifierState };
}
