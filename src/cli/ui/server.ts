/**
 * The web UI's HTTP server: the page, its two built assets, the JSON API under /api and one server-sent event
 * stream fed by one shared watch of PackageSyncs (every open page hears every change from that one watch, not one
 * watch per tab). Everything the cluster answers, it answers as the user's kubeconfig; security.ts decides which
 * requests are let through at all.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeApiError } from '../../adapters/kube/client.ts';
import { Informer } from '../../adapters/kube/informer.ts';
import { PackageSyncs, packageSyncCollectionPath } from '../../adapters/kube/packagesyncs.ts';
import { API_VERSION, KIND, type PackageSync } from '../../api/packagesync.ts';
import type { Cluster } from '../cluster.ts';
import { errorMessage } from '../exit-codes.ts';
import { performAction, whoAmI } from './actions.ts';
import { ACTIONS, FleetQuerySchema, type Action, type ChangeEvent, type FleetPage } from './api-types.ts';
import { packageSyncDetail } from './detail.ts';
import { fleetPage } from './fleet.ts';
import {
  CSRF_COOKIE,
  CSRF_HEADER,
  SECURITY_HEADERS,
  allowedHosts,
  checkAction,
  checkHost,
  type Refusal,
} from './security.ts';

export interface UiServerOptions {
  cluster: Cluster;
  address: string;
  /** 0: any free port. */
  port: number;
  /** Only this namespace's PackageSyncs (the user may not list all); all namespaces when unset. */
  namespace?: string;
  /** Where `npm run build:ui` wrote app.js and app.css. */
  assetsDir: string;
}

export interface UiServer {
  url: string;
  close(): Promise<void>;
}

/** SSE comments this often keep proxies and the browser from closing an idle stream. */
const KEEPALIVE_MS = 20_000;

export async function startUiServer(opts: UiServerOptions): Promise<UiServer> {
  const assets = await readAssets(opts.assetsDir);
  const token = randomBytes(32).toString('base64url');
  const user = await whoAmI(opts.cluster);
  const recorder = new PackageSyncs(opts.cluster.client, 'packagesync-ui');
  let refused: string | undefined;
  let wasRefused!: () => void;
  const refusal = new Promise<void>((r) => (wasRefused = r));
  const informer = new Informer(opts.cluster.client, {
    path: packageSyncCollectionPath(opts.namespace),
    objectType: { apiVersion: API_VERSION, kind: KIND },
    // the user may not list PackageSyncs here: the fleet page says so with the API server's words
    onRefused: (e) => {
      refused = `${e.reason}: ${e.message}`;
      wasRefused();
    },
  });
  const streams = new Set<ServerResponse>();
  let synced = false;
  informer.on((_event, obj) => {
    if (!synced) return;
    const change: ChangeEvent = { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name };
    const frame = `data: ${JSON.stringify(change)}\n\n`;
    for (const res of streams) res.write(frame);
  });
  informer.start();
  await Promise.race([informer.synced, refusal]);
  synced = true;

  let allowed = new Set<string>();
  const page = indexHtml(token);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    const badHost = checkHost(req.headers.host, allowed);
    if (badHost) return sendJson(res, badHost.status, { ok: false, message: badHost.message });
    const url = new URL(req.url ?? '/', 'http://ui.invalid');
    const path = url.pathname;
    if (req.method === 'GET' && path === '/') {
      res.setHeader('set-cookie', `${CSRF_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict`);
      return send(res, 200, 'text/html; charset=utf-8', page);
    }
    if (req.method === 'GET' && path === '/assets/app.js')
      return send(res, 200, 'text/javascript; charset=utf-8', assets.js);
    if (req.method === 'GET' && path === '/assets/app.css')
      return send(res, 200, 'text/css; charset=utf-8', assets.css);
    if (req.method === 'GET' && path === '/api/whoami') return sendJson(res, 200, { user });
    if (req.method === 'GET' && path === '/api/watch') return openStream(req, res, streams);
    if (req.method === 'GET' && path === '/api/packagesyncs') {
      const query = FleetQuerySchema.safeParse(Object.fromEntries(url.searchParams));
      if (!query.success) return sendJson(res, 400, { ok: false, message: query.error.issues[0]?.message });
      const body: FleetPage = {
        ...fleetPage(informer.cache.values() as Iterable<unknown> as Iterable<PackageSync>, query.data),
        ...(refused ? { refused } : {}),
      };
      return sendJson(res, 200, body);
    }
    const one = /^\/api\/packagesyncs\/([^/]+)\/([^/]+)(?:\/([a-z]+))?$/.exec(path);
    if (one) {
      const [namespace, name] = [decodeURIComponent(one[1]!), decodeURIComponent(one[2]!)];
      const action = one[3];
      if (req.method === 'GET' && !action) {
        const ps = await opts.cluster.packageSyncs.get(namespace, name);
        if (!ps) return sendJson(res, 404, { ok: false, message: `PackageSync ${namespace}/${name} not found` });
        return sendJson(res, 200, await packageSyncDetail(opts.cluster, ps));
      }
      if (req.method === 'POST' && action && (ACTIONS as readonly string[]).includes(action)) {
        const denied: Refusal = checkAction(
          { origin: req.headers.origin, cookie: req.headers.cookie, token: header(req, CSRF_HEADER) },
          token,
          allowed,
        );
        if (denied) return sendJson(res, denied.status, { ok: false, message: denied.message });
        const done = await performAction(opts.cluster, recorder, user, namespace, name, action as Action);
        return sendJson(res, done.status, done.result);
      }
    }
    sendJson(res, 404, { ok: false, message: `${req.method} ${path}: no such page` });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      const status = e instanceof KubeApiError ? e.status : 500;
      if (!res.headersSent) sendJson(res, status, { ok: false, message: errorMessage(e) });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.address, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  allowed = allowedHosts(opts.address, port);
  const keepalive = setInterval(() => streams.forEach((s) => s.write(': keepalive\n\n')), KEEPALIVE_MS);
  const host = opts.address.includes(':') ? `[${opts.address}]` : opts.address;
  return {
    url: `http://${host}:${port}/`,
    close: async () => {
      clearInterval(keepalive);
      informer.stop();
      for (const s of streams) s.end();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function openStream(req: IncomingMessage, res: ServerResponse, streams: Set<ServerResponse>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'keep-alive' });
  res.write(': connected\n\n');
  streams.add(res);
  req.on('close', () => streams.delete(res));
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

async function readAssets(dir: string): Promise<{ js: string; css: string }> {
  try {
    const [js, css] = await Promise.all([readFile(`${dir}/app.js`, 'utf8'), readFile(`${dir}/app.css`, 'utf8')]);
    return { js, css };
  } catch {
    throw new Error(`the UI is not built (no ${dir}/app.js): run npm run build:ui`);
  }
}

/** The one HTML page: no inline script or style (the CSP forbids both); the CSRF token in a meta tag. */
function indexHtml(token: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="packagesync-csrf" content="${token}">
<title>PackageSync</title>
<link rel="stylesheet" href="/assets/app.css">
<script type="module" src="/assets/app.js"></script>
</head>
<body><div id="app"></div></body>
</html>
`;
}
