/**
 * The informer never turns a persistent 410 Gone into a tight relist loop: if the watch expires right
 * after a fresh list (a lagging watch cache), it backs off before listing again. (The ordinary 410 —
 * one relist, then watching on — is tested against the real API server in e2e/safety-api.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { KubeApiError, type KubeClient } from '../../src/adapters/kube/client.ts';
import { Informer } from '../../src/adapters/kube/informer.ts';

describe('Informer on an API server whose watches always expire', () => {
  it('backs off between relists instead of looping', async () => {
    let lists = 0;
    const errors: unknown[] = [];
    const client = {
      request: async () => {
        lists++;
        return { items: [], metadata: { resourceVersion: String(lists) } };
      },
      stream: async () => {
        throw new KubeApiError(410, 'Expired', 'too old resource version');
      },
    } as unknown as KubeClient;
    const informer = new Informer(client, { path: '/api/v1/configmaps', onError: (e) => errors.push(e) });
    informer.start();
    await new Promise((r) => setTimeout(r, 2000));
    informer.stop();
    // 250 + 500 + 1000 ms of back-off fit in 2 s: a handful of lists, not thousands
    expect(lists).toBeGreaterThanOrEqual(2);
    expect(lists).toBeLessThanOrEqual(5);
    expect(errors.length).toBe(lists);
  });
});
