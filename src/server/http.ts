/**
 * The controller's HTTP endpoints, on node:http: /metrics on --metrics-bind-address (default :8080),
 * /healthz and /readyz on --health-probe-bind-address (default :8081), as controller-runtime lays them
 * out. Each endpoint is a bind address plus a `routes` map; more routes (the webhook receiver) plug in
 * by adding a map entry or another endpoint. Endpoints that share an address share one server.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ControllerMetrics } from './metrics.ts';

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
/** Path → handler. A key ending in `/` also matches every path below it (e.g. `/hook/` for receivers). */
export type Routes = Record<string, RouteHandler>;

export interface Endpoint {
  /** `host:port`, `:port` (all interfaces), `[::1]:port`; `0` disables the endpoint, as in controller-runtime. */
  bindAddress: string;
  routes: Routes;
}

export interface RunningServers {
  /** Where each server listens (the real port when the address asked for port 0). */
  readonly addresses: AddressInfo[];
  close(): Promise<void>;
}

export function parseBindAddress(addr: string): { host?: string; port: number } | undefined {
  if (addr === '0' || addr === '') return undefined;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(addr);
  const port = Number(m?.[3]);
  if (!m || port > 65535) throw new Error(`bind address "${addr}": expected host:port, :port, [ipv6]:port or 0`);
  const host = m[1] ?? m[2];
  return host ? { host, port } : { port };
}

export function findRoute(routes: Routes, path: string): RouteHandler | undefined {
  const exact = routes[path];
  if (exact) return exact;
  let best: string | undefined;
  for (const key of Object.keys(routes)) {
    if (key.endsWith('/') && path.startsWith(key) && (!best || key.length > best.length)) best = key;
  }
  return best ? routes[best] : undefined;
}

/** Starts one server per distinct bind address; fails before listening when two endpoints claim one path. */
export async function startHttpServers(
  endpoints: Endpoint[],
  onError: (e: unknown, path: string) => void = () => undefined,
): Promise<RunningServers> {
  const byAddress = new Map<string, Routes>();
  for (const ep of endpoints) {
    if (!parseBindAddress(ep.bindAddress)) continue;
    const routes = byAddress.get(ep.bindAddress) ?? {};
    for (const [path, handler] of Object.entries(ep.routes)) {
      if (routes[path]) throw new Error(`${ep.bindAddress}: two handlers for ${path}`);
      routes[path] = handler;
    }
    byAddress.set(ep.bindAddress, routes);
  }
  const servers: Server[] = [];
  const close = () =>
    Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    ).then(() => undefined);
  try {
    for (const [address, routes] of byAddress) servers.push(await listen(address, routes, onError));
  } catch (e) {
    await close();
    throw e;
  }
  return { addresses: servers.map((s) => s.address() as AddressInfo), close };
}

function listen(address: string, routes: Routes, onError: (e: unknown, path: string) => void): Promise<Server> {
  const { host, port } = parseBindAddress(address)!;
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const handler = findRoute(routes, path);
    if (!handler) return reply(res, 404, 'not found\n');
    try {
      await handler(req, res);
    } catch (e) {
      onError(e, path);
      if (!res.headersSent) reply(res, 500, 'internal error\n');
      else res.destroy();
    }
  });
  // Probes and scrapes are tiny; a slow or idle client must not hold sockets for long.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

function reply(res: ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

/** Probes and scrapes are reads: anything but GET/HEAD is refused (the webhook route decides for itself). */
function readOnly(handler: RouteHandler): RouteHandler {
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return reply(res, 405, 'method not allowed\n');
    }
    return handler(req, res);
  };
}

export function metricsRoutes(metrics: Pick<ControllerMetrics, 'render'>): Routes {
  return {
    '/metrics': readOnly(async (_req, res) => {
      const { contentType, body } = await metrics.render();
      reply(res, 200, body, contentType);
    }),
  };
}

export interface Readiness {
  ready: boolean;
  message: string;
}

export function probeRoutes(readiness: () => Readiness): Routes {
  return {
    // Alive as long as the event loop answers: a stuck loop fails this probe and gets the pod restarted.
    '/healthz': readOnly((_req, res) => reply(res, 200, 'ok\n')),
    '/readyz': readOnly((_req, res) => {
      const r = readiness();
      reply(res, r.ready ? 200 : 503, `${r.message}\n`);
    }),
  };
}

/**
 * Ready once the PackageSync watch has synced. A standby replica (leader election on, not leading) is
 * ready too: it holds no watch, and marking it unready would only make rollouts wait for a leader change.
 */
export function controllerReadiness(state: {
  leaderElection: boolean;
  leading: boolean;
  watchSynced: boolean;
  /** Reconciles past their deadline and still running (the watchdog, ADR 0032), and the worker count. */
  overdue?: number;
  concurrency?: number;
}): Readiness {
  if (state.leaderElection && !state.leading)
    return { ready: true, message: 'ok: standby, waiting for the leader lease' };
  if (!state.watchSynced) return { ready: false, message: 'PackageSync watch not synced yet' };
  // One stuck reconcile gives its worker back and stops nobody; as many stuck as there are workers means the
  // process itself is wedged (its connection pool, say): not ready, so it is seen.
  const overdue = state.overdue ?? 0;
  if (state.concurrency !== undefined && overdue >= state.concurrency) {
    return {
      ready: false,
      message: `${overdue} reconciles outlived their deadline and are still running (--concurrency ${state.concurrency}): see the log`,
    };
  }
  if (overdue > 0) return { ready: true, message: `ok: ${overdue} reconciles outlived their deadline (see the log)` };
  return { ready: true, message: 'ok' };
}
