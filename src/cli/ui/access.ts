/**
 * As whom each UI request reads and acts (docs/adr/0036, 0039). `packagesync ui` on a laptop: always the
 * kubeconfig's identity. In the cluster (the controller's --ui-address): the request's own bearer token (identity.ts),
 * sent to the API server as is — or, from the auth proxy the operator named, the proxy's token impersonating the
 * user and groups its headers name — so the API server authenticates every request and RBAC decides every read and
 * action. A token the API server does not accept gets 401, and nothing is read for it.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { KubeApiError, KubeClient } from '../../adapters/kube/client.ts';
import type { Discovery } from '../../adapters/kube/discovery.ts';
import type { KubeconfigInfo, KubeHeaders } from '../../adapters/kube/kubeconfig.ts';
import { Objects } from '../../adapters/kube/objects.ts';
import { reviewedUser } from '../../adapters/kube/self-subject-review.ts';
import { PackageSyncs } from '../../adapters/kube/packagesyncs.ts';
import type { Cluster } from '../cluster.ts';
import { whoAmI } from './actions.ts';
import { credentialOf, type Credential } from './identity.ts';
import { proxiedPlanIdentity, type CliKubeconfig, type PlanIdentity } from './plan-identity.ts';

export interface Viewer {
  /** The API as this viewer: every request with their credentials. */
  cluster: Cluster;
  /** As the API server names them (a SelfSubjectReview): for the Events recording their actions. */
  user: string;
  /**
   * May they list PackageSyncs (or PackageSyncSets) in `namespace` (RBAC, asked once a minute)? The shared
   * watches are not theirs.
   */
  mayList(namespace: string, resource?: ListedResource): Promise<boolean>;
  /**
   * `--kubeconfig <file>` for the `packagesync plan` child process of one PackageSync (plan-runner.ts): as them, or
   * for a viewer behind the auth proxy the server's own identity once RBAC allows it (plan-identity.ts); or why not.
   */
  planKubeconfig(namespace: string, name: string): Promise<PlanIdentity>;
}

/** What the UI's shared watches list: each viewer sees of them what RBAC lets them list. */
export type ListedResource = 'packagesyncs' | 'packagesyncsets';

export type ViewerResult = { ok: true; viewer: Viewer } | { ok: false; status: number; message: string };

export interface Access {
  /** In-cluster: requests carry their own credentials (sign-in form, bearer header, auth proxy). */
  readonly perRequest: boolean;
  viewer(req: IncomingMessage): Promise<ViewerResult>;
  /** The sign-in form's token: who the API server says it is, or why not. */
  signIn(token: string): Promise<ViewerResult>;
  close(): Promise<void>;
}

/** `packagesync ui`: one identity, the kubeconfig's; its watch is its own, so whatever it lists it may see. */
export async function kubeconfigAccess(cluster: Cluster, kubeconfigPath?: string): Promise<Access> {
  const args = kubeconfigPath ? ['--kubeconfig', kubeconfigPath] : [];
  const viewer: Viewer = {
    cluster,
    user: await whoAmI(cluster),
    mayList: () => Promise.resolve(true),
    planKubeconfig: () => Promise.resolve({ ok: true, args, done: () => Promise.resolve() }),
  };
  return {
    perRequest: false,
    viewer: () => Promise.resolve({ ok: true, viewer }),
    signIn: () => Promise.resolve({ ok: false, status: 404, message: 'this UI acts with your kubeconfig' }),
    close: () => Promise.resolve(),
  };
}

export interface TokenAccessOptions {
  /** Where the API server is and the CA that verifies it (the controller's own config; nothing of its credentials). */
  server: KubeconfigInfo;
  /** Shared by every viewer: what kinds exist is no one's secret (any authenticated user may read discovery). */
  discovery: Discovery;
  /** --ui-auth-proxy-identity: the one identity whose X-Remote-User / X-Remote-Group headers are believed. */
  authProxyIdentity?: string;
  /**
   * The server's own identity for a CLI child process: `--kubeconfig` of the controller's kubeconfig, or nothing in
   * a pod. Used only for the plan of a viewer behind the auth proxy whom RBAC allows it (plan-identity.ts).
   */
  serverKubeconfigArgs?: string[];
}

/** Sessions kept (one client each): beyond this the least recently used is closed. */
const MAX_SESSIONS = 500;
/** A session unused this long is closed; the API server re-authenticates its token on every request anyway. */
const SESSION_IDLE_MS = 5 * 60_000;
/** How long an RBAC answer about listing a namespace is reused. */
const LIST_ANSWER_MS = 60_000;

interface Session {
  viewer: Viewer;
  client: KubeClient;
  usedAt: number;
}

/** The in-cluster UI's access: each request's own bearer token, forwarded. */
export class TokenAccess implements Access {
  readonly perRequest = true;
  private readonly sessions = new Map<string, Promise<Session | ViewerResult>>();
  private readonly sweep = setInterval(() => void this.closeIdle(), 60_000).unref();

  private readonly opts: TokenAccessOptions;

  constructor(opts: TokenAccessOptions) {
    this.opts = opts;
  }

  async viewer(req: IncomingMessage): Promise<ViewerResult> {
    const c = credentialOf(req.headers, req.headersDistinct as Record<string, string[]>);
    if (!c.ok) return c;
    return this.sessionFor(c.credential);
  }

  signIn(token: string): Promise<ViewerResult> {
    return this.sessionFor({ token, from: 'cookie' });
  }

  private async sessionFor(credential: Credential): Promise<ViewerResult> {
    const key = createHash('sha256')
      .update(JSON.stringify([credential.token, credential.impersonate ?? null]))
      .digest('hex');
    let pending = this.sessions.get(key);
    if (!pending) {
      pending = this.open(credential);
      this.sessions.set(key, pending);
      if (this.sessions.size > MAX_SESSIONS) void this.evict(this.sessions.keys().next().value!);
    } else {
      // Map order is insertion order: re-inserting keeps the least recently used first
      this.sessions.delete(key);
      this.sessions.set(key, pending);
    }
    let got: Session | ViewerResult;
    try {
      got = await pending;
    } catch (e) {
      // the API server did not answer: nothing is kept, the next request tries again
      this.sessions.delete(key);
      throw e;
    }
    if ('viewer' in got && 'client' in got) {
      got.usedAt = Date.now();
      return { ok: true, viewer: got.viewer };
    }
    // a refusal is not kept: the next request asks the API server again (a token may be fixed, RBAC may change)
    this.sessions.delete(key);
    return got;
  }

  private async open(credential: Credential): Promise<Session | ViewerResult> {
    const asToken = await this.client(credential.token);
    const reviewed = await review(asToken);
    if (!reviewed.ok) {
      await asToken.close();
      return reviewed;
    }
    let client = asToken;
    let user = reviewed.user;
    if (credential.impersonate) {
      if (!this.opts.authProxyIdentity || reviewed.user !== this.opts.authProxyIdentity) {
        await asToken.close();
        return {
          ok: false,
          status: 401,
          message: this.opts.authProxyIdentity
            ? `X-Remote-User is believed only from ${this.opts.authProxyIdentity}, not from ${reviewed.user}`
            : 'X-Remote-User is not believed: no auth proxy is trusted (--ui-auth-proxy-identity)',
        };
      }
      await asToken.close();
      // the proxy's token with Impersonate-* headers: the API server also checks the proxy may impersonate them
      client = await this.client(credential.token, credential.impersonate);
      const impersonated = await review(client);
      if (!impersonated.ok) {
        await client.close();
        return impersonated;
      }
      user = impersonated.user;
    }
    const discovery = this.opts.discovery;
    const objects = new Objects(client, discovery);
    const cluster: Cluster = {
      client,
      discovery,
      objects,
      packageSyncs: new PackageSyncs(client, 'packagesync-ui'),
      contextNamespace: 'default',
      close: () => client.close(),
    };
    const answers = new Map<string, { at: number; may: Promise<boolean> }>();
    const mayList = (namespace: string, resource: ListedResource): Promise<boolean> => {
      const key = `${resource}/${namespace}`;
      const known = answers.get(key);
      if (known && Date.now() - known.at < LIST_ANSWER_MS) return known.may;
      const may = mayListIn(client, namespace, resource).catch(() => {
        answers.delete(key); // not kept: the next page load asks again
        return false;
      });
      answers.set(key, { at: Date.now(), may });
      return may;
    };
    const viewer: Viewer = {
      cluster,
      user,
      // allowed everywhere (a ClusterRole) answers for every namespace with one review
      mayList: async (ns, resource = 'packagesyncs') => (await mayList('', resource)) || mayList(ns, resource),
      planKubeconfig: async (namespace, name) => {
        const asViewer = () => tokenKubeconfig(this.opts.server, credential);
        if (!credential.impersonate) return { ok: true, ...(await asViewer()) };
        // impersonation does not chain: the proxied viewer's plan is decided by RBAC, then run as the server
        const packageSync = await cluster.packageSyncs.get(namespace, name);
        if (!packageSync) return { ok: false, status: 404, message: `PackageSync ${namespace}/${name} not found` };
        const serverArgs = this.opts.serverKubeconfigArgs ?? [];
        return proxiedPlanIdentity({ client, user, packageSync, asViewer, serverArgs });
      },
    };
    return { viewer, client, usedAt: Date.now() };
  }

  private client(token: string, impersonate?: Credential['impersonate']): Promise<KubeClient> {
    const s = this.opts.server;
    const headers: KubeHeaders = { authorization: `Bearer ${token}` };
    if (impersonate) {
      headers['impersonate-user'] = impersonate.user;
      if (impersonate.groups.length > 0) headers['impersonate-group'] = impersonate.groups;
    }
    // the CA only: never the controller's client certificate, which the API server would believe before the token
    const tls = {
      ...(s.ca ? { ca: s.ca } : {}),
      ...(s.insecureSkipTlsVerify ? { rejectUnauthorized: false } : {}),
      ...(s.tlsServerName ? { servername: s.tlsServerName } : {}),
    };
    const info: KubeconfigInfo = { ...s, user: 'ui-viewer', auth: ['token'], impersonate: impersonate?.user };
    return KubeClient.fromKubeconfig({ info, tls, headers: () => Promise.resolve(headers) }, { connections: 8 });
  }

  private async evict(key: string): Promise<void> {
    const pending = this.sessions.get(key);
    this.sessions.delete(key);
    const got = await pending?.catch(() => undefined);
    if (got && 'client' in got) await got.client.close();
  }

  private async closeIdle(): Promise<void> {
    const now = Date.now();
    for (const [key, pending] of [...this.sessions]) {
      const got = await pending.catch(() => undefined);
      if (!got) continue;
      if ('client' in got && now - got.usedAt > SESSION_IDLE_MS) await this.evict(key);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    await Promise.all([...this.sessions.keys()].map((k) => this.evict(k)));
  }
}

/** A kubeconfig holding only the viewer's token (and the proxy's impersonation), readable by this process alone. */
async function tokenKubeconfig(server: KubeconfigInfo, credential: Credential): Promise<CliKubeconfig> {
  const dir = await mkdtemp(join(tmpdir(), 'packagesync-ui-'));
  const path = join(dir, 'kubeconfig');
  const cluster: Record<string, unknown> = { server: server.server };
  if (server.ca) cluster['certificate-authority-data'] = server.ca.toString('base64');
  if (server.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true;
  if (server.tlsServerName) cluster['tls-server-name'] = server.tlsServerName;
  const user: Record<string, unknown> = { token: credential.token };
  if (credential.impersonate) {
    user.as = credential.impersonate.user;
    if (credential.impersonate.groups.length > 0) user['as-groups'] = credential.impersonate.groups;
  }
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'cluster', cluster }],
    users: [{ name: 'viewer', user }],
    contexts: [{ name: 'viewer', context: { cluster: 'cluster', user: 'viewer' } }],
    'current-context': 'viewer',
  };
  await writeFile(path, JSON.stringify(doc), { mode: 0o600 });
  return { args: ['--kubeconfig', path], done: () => rm(dir, { recursive: true, force: true }) };
}

/** A SelfSubjectReview with the client's credentials: the API server says who they are, or that it does not know them. */
async function review(
  client: KubeClient,
): Promise<{ ok: true; user: string } | { ok: false; status: number; message: string }> {
  try {
    const user = await reviewedUser(client);
    if (user === undefined) return { ok: false, status: 401, message: 'the API server named no user for this token' };
    return { ok: true, user };
  } catch (e) {
    if (e instanceof KubeApiError && (e.status === 401 || e.status === 403))
      return { ok: false, status: e.status, message: `the API server refused the token: ${e.reason}: ${e.message}` };
    throw e;
  }
}

/** A SelfSubjectAccessReview: may these credentials list `resource` in `namespace` ('' = in every namespace)? */
async function mayListIn(client: KubeClient, namespace: string, resource: ListedResource): Promise<boolean> {
  const r = await client.request<{ status?: { allowed?: boolean } }>(
    'POST',
    '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: {
          resourceAttributes: { group: 'packagesync.io', resource, verb: 'list', namespace },
        },
      },
    },
  );
  return r.status?.allowed === true;
}

/**
 * The objects of the namespaces where `viewer` may list them (all, for the kubeconfig's own watch), and a key
 * naming which namespaces those are ('*': every one).
 */
export async function visibleTo<T extends { metadata: { namespace: string } }>(
  viewer: Viewer,
  all: T[],
  resource: ListedResource = 'packagesyncs',
): Promise<{ items: T[]; namespaces: string }> {
  const namespaces = [...new Set(all.map((p) => p.metadata.namespace))];
  const may = new Set(
    (await Promise.all(namespaces.map(async (ns) => ((await viewer.mayList(ns, resource)) ? ns : '')))).filter(Boolean),
  );
  if (may.size === namespaces.length) return { items: all, namespaces: '*' };
  return { items: all.filter((p) => may.has(p.metadata.namespace)), namespaces: [...may].sort().join(',') };
}
