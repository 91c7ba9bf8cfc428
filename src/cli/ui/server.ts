/**
 * The web UI's HTTP server: the page, its two built assets, the JSON API under /api and one server-sent event
 * stream fed by one shared watch of PackageSyncs and one of PackageSyncSets (set-routes.ts; every open page hears
 * every change from those watches, not one watch per tab). Everything the cluster answers, it answers as the request's viewer (access.ts: the user's
 * kubeconfig, or in the cluster the request's own bearer token); security.ts decides which requests are let
 * through at all.
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
import { z } from 'zod';
import { kubeconfigAccess, visibleTo, type Access, type Viewer } from './access.ts';
import { performAction } from './actions.ts';
import {
  ACTIONS,
  FleetQuerySchema,
  ObjectQuerySchema,
  type Action,
  type ChangeEvent,
  type FleetPage,
} from './api-types.ts';
import { packageSyncDetail } from './detail.ts';
import { fleetPage, fleetRow } from './fleet.ts';
import { clearedSessionCookie, sessionCookie, tokenProblem } from './identity.ts';
import { objectDetail } from './object-page.ts';
import { planRunner } from './plan-runner.ts';
import { setRoutes } from './set-routes.ts';
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
  /**
   * The one watch of PackageSyncs every page shares, and the Events recording actions: the user's kubeconfig for
   * `packagesync ui`, the controller's identity in the cluster (where `access` decides what each viewer sees).
   */
  cluster: Cluster;
  /** As whom each request reads and acts; default: `cluster`'s identity (access.ts). */
  access?: Access;
  address: string;
  /** 0: any free port. */
  port: number;
  /** Only this namespace's PackageSyncs (the user may not list all); all namespaces when unset. */
  namespace?: string;
  /** Where `npm run build:ui` wrote app.js and app.css. */
  assetsDir: string;
  /** `packagesync ui --kubeconfig`: what the plan child process is given (unset: it finds the same one). */
  kubeconfigPath?: string;
  /** Flags every plan is run with (the controller's --allow-insecure-http). */
  planArgs?: string[];
}

export interface UiServer {
  url: string;
  close(): Promise<void>;
}

/** SSE comments this often keep proxies and the browser from closing an idle stream. */
const KEEPALIVE_MS = 20_000;
/** A signed-in session's cookie lives a working day; the token's own expiry may end it sooner. */
const SESSION_SECONDS = 8 * 3600;
const MAX_BODY_BYTES = 32 * 1024;

interface Stream {
  res: ServerResponse;
  viewer: Viewer;
}

export async function startUiServer(opts: UiServerOptions): Promise<UiServer> {
  const assets = await readAssets(opts.assetsDir);
  const token = randomBytes(32).toString('base64url');
  const access = opts.access ?? (await kubeconfigAccess(opts.cluster, opts.kubeconfigPath));
  const recorder = new PackageSyncs(opts.cluster.client, 'packagesync-ui');
  let refused: string | undefined;
  let wasRefused!: () => void;
  const refusal = new Promise<void>((r) => (wasRefused = r));
  const informer = new Informer(opts.cluster.client, {
    path: packageSyncCollectionPath(opts.namespace),
    objectType: { apiVersion: API_VERSION, kind: KIND },
    // the user may not list PackageSyncs here: the fleet page says so with the API server's words
    onRefused: (e) => {
      refused =
        `The API server refused to list PackageSyncs: ${e.reason}: ${e.message}. ` +
        'Start packagesync ui -n NAMESPACE for a namespace you may list.';
      wasRefused();
    },
  });
  const streams = new Set<Stream>();
  /** This server's plans, two at a time (plan-runner.ts). */
  const runPlan = planRunner();
  let synced = false;
  /**
   * Fleet pages by what they were computed from (the watch's version, who may see which namespaces, the query):
   * a status write sends every open fleet page a change, and their re-reads of the same page are one computation.
   */
  let fleetVersion = 0;
  const fleetPages = new Map<string, Omit<FleetPage, 'refused'>>();
  const broadcast = (change: ChangeEvent) => {
    const frame = `data: ${JSON.stringify(change)}\n\n`;
    const resource = change.kind ? 'packagesyncsets' : 'packagesyncs';
    // each viewer hears only of namespaces where RBAC lets them list that kind
    for (const s of streams)
      void s.viewer
        .mayList(change.namespace, resource)
        .then((may) => may && !s.res.writableEnded && s.res.write(frame));
  };
  informer.on((event, obj) => {
    fleetVersion++;
    fleetPages.clear();
    if (!synced) return;
    broadcast({
      namespace: obj.metadata.namespace ?? '',
      name: obj.metadata.name,
      ...(event === 'delete' ? {} : { row: fleetRow(obj as unknown as PackageSync) }),
    });
  });
  informer.start();
  const sets = setRoutes({ cluster: opts.cluster, namespace: opts.namespace, recorder, onChange: broadcast });
  await Promise.all([Promise.race([informer.synced, refusal]), sets.ready]);
  synced = true;

  let allowed = new Set<string>();
  const page = indexHtml(token);
  // in the cluster the page is reached through TLS: its cookies say Secure
  const secure = access.perRequest ? '; Secure' : '';

  const csrf = (req: IncomingMessage): Refusal =>
    checkAction(
      { origin: req.headers.origin, cookie: req.headers.cookie, token: header(req, CSRF_HEADER) },
      token,
      // in the cluster the server answers to whatever name the ingress gives it: the request's own Host is the origin
      access.perRequest ? new Set([String(req.headers.host ?? '').toLowerCase()]) : allowed,
    );

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    // DNS rebinding matters where credentials are ambient (the kubeconfig); in the cluster each request brings its own
    const badHost = access.perRequest ? undefined : checkHost(req.headers.host, allowed);
    if (badHost) return sendJson(res, badHost.status, { ok: false, message: badHost.message });
    const url = new URL(req.url ?? '/', 'http://ui.invalid');
    const path = url.pathname;
    if (req.method === 'GET' && path === '/') {
      res.setHeader('set-cookie', `${CSRF_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict${secure}`);
      return send(res, 200, 'text/html; charset=utf-8', page);
    }
    if (req.method === 'GET' && path === '/assets/app.js')
      return send(res, 200, 'text/javascript; charset=utf-8', assets.js);
    if (req.method === 'GET' && path === '/assets/app.css')
      return send(res, 200, 'text/css; charset=utf-8', assets.css);
    if (path === '/api/session' && access.perRequest) return session(req, res);
    if (!path.startsWith('/api/'))
      return sendJson(res, 404, { ok: false, message: `${req.method} ${path}: no such page` });

    // everything under /api/ acts as someone: no credentials the API server accepts, no answer
    const who = await access.viewer(req);
    if (!who.ok) return sendJson(res, who.status, { ok: false, message: who.message, signIn: access.perRequest });
    const viewer = who.viewer;
    if (req.method === 'GET' && path === '/api/whoami')
      // Sign out clears the session cookie; a token in the Authorization header (an auth proxy's) is not the page's
      return sendJson(res, 200, { user: viewer.user, signOut: access.perRequest && !req.headers.authorization });
    if (req.method === 'GET' && path === '/api/watch') return openStream(req, res, streams, viewer);
    if (path.startsWith('/api/packagesyncsets')) {
      const answer = await sets.handle(req.method ?? 'GET', url, viewer, () => csrf(req), access.perRequest);
      if (answer) return sendJson(res, answer.status, answer.body);
    }
    if (req.method === 'GET' && path === '/api/packagesyncs') {
      const query = FleetQuerySchema.safeParse(Object.fromEntries(url.searchParams));
      if (!query.success) return sendJson(res, 400, { ok: false, message: query.error.issues[0]?.message });
      const version = fleetVersion;
      const all = [...informer.cache.values()] as unknown[] as PackageSync[];
      const visible = await visibleTo(viewer, all);
      const key = `${visible.namespaces}\n${JSON.stringify(query.data)}`;
      let computed = version === fleetVersion ? fleetPages.get(key) : undefined;
      if (!computed) {
        computed = fleetPage(visible.items, query.data);
        // a change while the viewer's access was being read: the page is right for this request, not for later ones
        if (version === fleetVersion) {
          if (fleetPages.size >= FLEET_PAGES_KEPT) fleetPages.clear();
          fleetPages.set(key, computed);
        }
      }
      const body: FleetPage = {
        ...computed,
        ...(refused ? { refused } : {}),
        ...(access.perRequest && all.length > 0 && visible.items.length === 0
          ? { refused: `${viewer.user} may not list PackageSyncs in any namespace that has one (RBAC).` }
          : {}),
      };
      return sendJson(res, 200, body);
    }
    const one = /^\/api\/packagesyncs\/([^/]+)\/([^/]+)(?:\/([a-z-]+))?$/.exec(path);
    if (one) {
      const [namespace, name] = [decodeURIComponent(one[1]!), decodeURIComponent(one[2]!)];
      const sub = one[3];
      if (req.method === 'GET' && (!sub || sub === 'object')) {
        const ps = await viewer.cluster.packageSyncs.get(namespace, name);
        if (!ps) return sendJson(res, 404, { ok: false, message: `PackageSync ${namespace}/${name} not found` });
        if (!sub) return sendJson(res, 200, await packageSyncDetail(viewer.cluster, ps));
        const ref = ObjectQuerySchema.safeParse(Object.fromEntries(url.searchParams));
        if (!ref.success) return sendJson(res, 400, { ok: false, message: ref.error.issues[0]?.message });
        return sendJson(res, 200, await objectDetail(viewer.cluster, ps, ref.data));
      }
      if (req.method === 'POST' && sub) {
        const denied = csrf(req);
        if (denied) return sendJson(res, denied.status, { ok: false, message: denied.message });
        if (sub === 'plan') {
          const output = url.searchParams.get('output') === 'json' ? 'json' : 'text';
          const kubeconfig = await viewer.planKubeconfig(namespace, name);
          if (!kubeconfig.ok)
            return sendJson(res, kubeconfig.status, { exitCode: -1, output: '', error: kubeconfig.message });
          try {
            const planned = await runPlan({
              namespace,
              name,
              output,
              kubeconfigArgs: kubeconfig.args,
              extraArgs: opts.planArgs ?? [],
            });
            return sendJson(res, planned.status, planned.result);
          } finally {
            await kubeconfig.done();
          }
        }
        if ((ACTIONS as readonly string[]).includes(sub)) {
          const revision = url.searchParams.get('revision') ?? '';
          const done = await performAction(
            viewer.cluster,
            recorder,
            viewer.user,
            namespace,
            name,
            sub as Action,
            revision,
          );
          return sendJson(res, done.status, done.result);
        }
      }
    }
    sendJson(res, 404, { ok: false, message: `${req.method} ${path}: no such page` });
  };

  /** The sign-in form (in the cluster): POST a token the API server accepts, get it back as an HttpOnly cookie. */
  const session = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const denied = csrf(req);
    if (denied) return sendJson(res, denied.status, { ok: false, message: denied.message });
    if (req.method === 'DELETE') {
      res.setHeader('set-cookie', clearedSessionCookie());
      return sendJson(res, 200, { ok: true, message: 'signed out' });
    }
    if (req.method !== 'POST') return sendJson(res, 405, { ok: false, message: 'POST or DELETE' });
    const body = SignInSchema.safeParse(await readJson(req));
    if (!body.success) return sendJson(res, 400, { ok: false, message: 'expected {"token": "…"}' });
    const problem = tokenProblem(body.data.token);
    if (problem) return sendJson(res, 400, { ok: false, message: problem });
    const who = await access.signIn(body.data.token);
    if (!who.ok) return sendJson(res, who.status, { ok: false, message: who.message });
    res.setHeader('set-cookie', sessionCookie(body.data.token, SESSION_SECONDS));
    return sendJson(res, 200, { ok: true, message: `signed in as ${who.viewer.user}` });
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
  const keepalive = setInterval(() => streams.forEach((s) => s.res.write(': keepalive\n\n')), KEEPALIVE_MS);
  const host = opts.address.includes(':') ? `[${opts.address}]` : opts.address;
  return {
    url: `http://${host}:${port}/`,
    close: async () => {
      clearInterval(keepalive);
      informer.stop();
      sets.stop();
      for (const s of streams) s.res.end();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      if (opts.access) await access.close();
    },
  };
}

/** Fleet pages kept for the current watch version (distinct queries and audiences; cleared on every change). */
const FLEET_PAGES_KEPT = 64;

const SignInSchema = z.object({ token: z.string().min(1) });

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function openStream(req: IncomingMessage, res: ServerResponse, streams: Set<Stream>, viewer: Viewer): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'keep-alive' });
  res.write(': connected\n\n');
  const stream = { res, viewer };
  streams.add(stream);
  req.on('close', () => streams.delete(stream));
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
