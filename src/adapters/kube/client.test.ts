import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiError, KubeClient } from './client.ts';
import type { Kubeconfig } from './kubeconfig.ts';

// A plain loopback HTTP server: what is tested is the client's own handling of requests (headers it refuses,
// requests that never get an answer), not any behaviour of the Kubernetes API.
let server: Server | undefined;
let client: KubeClient | undefined;
afterEach(async () => {
  await client?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  client = server = undefined;
});

async function serve(answer: (req: IncomingMessage) => 'hang' | object): Promise<{ seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  server = createServer((req, res) => {
    seen.push(req);
    const a = answer(req);
    if (a === 'hang') return; // never answers
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(a));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { seen };
}

async function connect(opts: { connections?: number; requestTimeoutMs?: number; headers?: Record<string, string> }) {
  const { port } = server!.address() as AddressInfo;
  const kc = {
    info: { server: `http://127.0.0.1:${port}`, auth: [], source: 'test', context: 't', cluster: 't' },
    tls: {},
    headers: () => Promise.resolve(opts.headers ?? {}),
  } as unknown as Kubeconfig;
  client = await KubeClient.fromKubeconfig(kc, opts);
  return client;
}

describe('KubeClient', () => {
  // issue 35: undici refused the header, and (before 8.13) kept the pooled connection it had picked busy for
  // good; once every connection was taken, every request of every PackageSync waited forever.
  it('refuses a header with CR/LF before sending, and the pool keeps serving every other request', async () => {
    const { seen } = await serve(() => ({ kind: 'ConfigMap' }));
    const c = await connect({ connections: 2, requestTimeoutMs: 2_000 });
    const hostile = 'deployer\r\nImpersonate-Group: system:masters';
    for (let i = 0; i < 6; i++) {
      const e = await c.request('GET', '/api/v1/namespaces/a/configmaps/x', { impersonate: hostile }).catch((x) => x);
      expect(e).toBeInstanceOf(KubeApiError);
      expect((e as KubeApiError).status).toBe(400);
      expect((e as Error).message).toContain('the impersonate-user header would hold characters');
      expect((e as Error).message).not.toContain('system:masters');
    }
    expect(seen).toHaveLength(0);
    for (let i = 0; i < 4; i++) {
      expect(await c.request('GET', '/api/v1/namespaces/a/configmaps/x', { timeoutMs: 2_000 })).toEqual({
        kind: 'ConfigMap',
      });
    }
  });

  it('refuses a credential header with a stray newline the same way', async () => {
    await serve(() => ({}));
    const c = await connect({ headers: { authorization: 'Bearer abc\n' } });
    const e = await c.request('GET', '/api').catch((x) => x);
    expect((e as KubeApiError).status).toBe(400);
    expect((e as Error).message).not.toContain('abc');
  });

  it('a request that gets no answer ends as a 504 within its timeout, and the caller may abort it sooner', async () => {
    await serve(() => 'hang');
    const c = await connect({ requestTimeoutMs: 500 });
    const started = Date.now();
    const e = await c.request('GET', '/api/v1/namespaces').catch((x) => x);
    expect((e as KubeApiError).status).toBe(504);
    expect(Date.now() - started).toBeLessThan(3_000);
    const caller = new AbortController();
    setTimeout(() => caller.abort(), 100);
    const aborted = await c
      .request('GET', '/api/v1/namespaces', { signal: caller.signal, timeoutMs: 60_000 })
      .catch((x) => x);
    expect(aborted).toBeInstanceOf(Error);
    expect(aborted).not.toBeInstanceOf(KubeApiError);
  });
});
