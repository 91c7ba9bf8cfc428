/**
 * Every request to the API server has a timeout — watches included, until their headers arrive. A
 * server that accepts connections and never answers (a half-dead API server, a frozen keep-alive
 * connection) must fail each call within the timeout, never hang a reconcile or the informer.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApiError, KubeClient } from '../../src/adapters/kube/client.ts';

describe('a KubeClient talking to an API server that never answers', () => {
  let server: Server;
  let dir: string;
  let client: KubeClient;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    server = createServer((s) => sockets.add(s)); // accepts, reads nothing, answers nothing
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    dir = await mkdtemp(join(tmpdir(), 'psync-kc-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await writeFile(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${url}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {}}]\n` +
        'contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
    );
    client = await KubeClient.create({ kubeconfig, requestTimeoutMs: 500 });
  });

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  });

  const timing = async (p: Promise<unknown>) => {
    const started = Date.now();
    const error = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    return { error, ms: Date.now() - started };
  };

  it('a request fails with a 504 Timeout after requestTimeoutMs', async () => {
    const { error, ms } = await timing(client.request('GET', '/api/v1/namespaces'));
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).status).toBe(504);
    expect(ms).toBeLessThan(3000);
  });

  it('a watch whose headers never come fails after the request timeout too', async () => {
    const { error, ms } = await timing(client.stream('/api/v1/configmaps', { query: { watch: 1 } }));
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).status).toBe(504);
    expect(ms).toBeLessThan(3000);
  });

  it('the caller cancelling is not reported as a timeout', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const { error } = await timing(client.request('GET', '/api/v1/namespaces', { signal: ac.signal, timeoutMs: 5000 }));
    expect(error).not.toBeInstanceOf(KubeApiError);
  });
});
