import { afterEach, describe, expect, it } from 'vitest';
import {
  controllerReadiness,
  findRoute,
  parseBindAddress,
  probeRoutes,
  startHttpServers,
  type RunningServers,
} from './http.ts';
import { createMetrics } from './metrics.ts';

describe('bind addresses', () => {
  it.each([
    [':8080', { port: 8080 }],
    ['127.0.0.1:9090', { host: '127.0.0.1', port: 9090 }],
    ['[::1]:8081', { host: '::1', port: 8081 }],
    ['0', undefined],
  ])('%s', (addr, want) => expect(parseBindAddress(addr)).toEqual(want));

  it.each(['8080', 'host', ':99999', 'a:b:80'])('rejects %s', (addr) =>
    expect(() => parseBindAddress(addr)).toThrow(/bind address/),
  );
});

describe('routes', () => {
  const a = () => undefined;
  const b = () => undefined;
  it('matches exact paths, then the longest prefix ending in /', () => {
    const routes = { '/metrics': a, '/hook/': b };
    expect(findRoute(routes, '/metrics')).toBe(a);
    expect(findRoute(routes, '/hook/abc')).toBe(b);
    expect(findRoute(routes, '/metrics/x')).toBeUndefined();
  });
});

describe('readiness', () => {
  it('is ready once the watch synced, and always as a standby', () => {
    expect(controllerReadiness({ leaderElection: false, leading: false, watchSynced: false }).ready).toBe(false);
    expect(controllerReadiness({ leaderElection: false, leading: false, watchSynced: true }).ready).toBe(true);
    expect(controllerReadiness({ leaderElection: true, leading: false, watchSynced: false }).ready).toBe(true);
    expect(controllerReadiness({ leaderElection: true, leading: true, watchSynced: false }).ready).toBe(false);
  });

  // ADR 0032: one stuck reconcile stops nobody (its worker was given back); as many as there are workers do
  it('is not ready when as many reconciles as workers outlived their deadline', () => {
    const base = { leaderElection: false, leading: false, watchSynced: true, concurrency: 4 };
    expect(controllerReadiness({ ...base, overdue: 1 })).toEqual({
      ready: true,
      message: 'ok: 1 reconciles outlived their deadline (see the log)',
    });
    const wedged = controllerReadiness({ ...base, overdue: 4 });
    expect(wedged.ready).toBe(false);
    expect(wedged.message).toContain('4 reconciles outlived their deadline');
  });
});

describe('the HTTP servers', () => {
  let servers: RunningServers | undefined;
  afterEach(() => servers?.close());

  it('serves /metrics on one address and the probes on another; 404 and 405 otherwise', async () => {
    let synced = false;
    const metrics = createMetrics({ processMetrics: false });
    metrics.setQueue(1, 0);
    servers = await startHttpServers([
      {
        bindAddress: '127.0.0.1:0',
        routes: { '/metrics': async (_q, r) => void r.end((await metrics.render()).body) },
      },
      {
        bindAddress: '127.0.0.2:0',
        routes: probeRoutes(() => controllerReadiness({ leaderElection: false, leading: false, watchSynced: synced })),
      },
    ]);
    const [m, p] = servers.addresses.map((a) => `http://${a.address}:${a.port}`);
    expect(await (await fetch(`${m}/metrics`)).text()).toContain('packagesync_queue_depth 1');
    expect((await fetch(`${m}/healthz`)).status).toBe(404);
    expect((await fetch(`${p}/healthz`)).status).toBe(200);
    expect((await fetch(`${p}/readyz`)).status).toBe(503);
    synced = true;
    expect((await fetch(`${p}/readyz`)).status).toBe(200);
    expect((await fetch(`${p}/readyz`, { method: 'POST' })).status).toBe(405);
  });

  it('shares one server when endpoints name the same address, and refuses duplicate paths', async () => {
    const h = () => undefined;
    await expect(
      startHttpServers([
        { bindAddress: '127.0.0.1:0', routes: { '/x': h } },
        { bindAddress: '127.0.0.1:0', routes: { '/x': h } },
      ]),
    ).rejects.toThrow(/two handlers/);
    servers = await startHttpServers([
      { bindAddress: '127.0.0.1:0', routes: { '/a': (_q, r) => void r.end('a') } },
      { bindAddress: '127.0.0.1:0', routes: { '/b': (_q, r) => void r.end('b') } },
      { bindAddress: '0', routes: { '/c': h } },
    ]);
    expect(servers.addresses).toHaveLength(1);
  });

  it('answers 500 when a handler throws, and keeps serving', async () => {
    servers = await startHttpServers([
      {
        bindAddress: '127.0.0.1:0',
        routes: {
          '/boom': () => {
            throw new Error('boom');
          },
          '/ok': (_q, r) => void r.end('ok'),
        },
      },
    ]);
    const base = `http://127.0.0.1:${servers.addresses[0]!.port}`;
    expect((await fetch(`${base}/boom`)).status).toBe(500);
    expect(await (await fetch(`${base}/ok`)).text()).toBe('ok');
  });
});
