/**
 * Where a kubeconfig's credentials come from, for ./kubeconfig.ts: certificate and key material (data or
 * file), token files re-read as they rotate, the in-cluster service account, and client-node for exec
 * plugins and auth providers (imported only for such users: docs/adr/0009). Errors name the file, never
 * its content.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import { errorText } from '../../core/failure.ts';
import type { Kubeconfig, KubeconfigInfo, KubeHeaders } from './kubeconfig-types.ts';

export const IN_CLUSTER_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Data (base64) wins over a file, as in client-go; a file is read once, at load. */
export function material(
  where: string,
  field: string,
  data: string | null | undefined,
  file: string | null | undefined,
) {
  if (data) return Buffer.from(data, 'base64');
  if (!file) return undefined;
  try {
    return readFileSync(file);
  } catch (e) {
    throw new Error(`${where}: cannot read ${field} ${file} (${(e as { code?: string }).code ?? 'error'})`, {
      cause: e,
    });
  }
}

/**
 * Reads a token file, again on every call (service account tokens rotate). After the first read, a read
 * that fails keeps the last token (a projected volume is swapped, not edited) rather than failing requests.
 */
export function tokenReader(file: string, where: string): () => string {
  let last: string | undefined;
  return () => {
    try {
      const token = readFileSync(file, 'utf8').trim();
      if (!token) throw Object.assign(new Error('empty'), { code: 'empty' });
      last = token;
    } catch (e) {
      if (last === undefined) {
        throw new Error(`${where}: cannot read token file ${file} (${(e as { code?: string }).code ?? 'error'})`, {
          cause: e,
        });
      }
    }
    return last;
  };
}

/** The service account of the pod: KUBERNETES_SERVICE_HOST/PORT, and token, ca.crt, namespace in `dir`. */
export function inCluster(dir: string, env: NodeJS.ProcessEnv): Kubeconfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  const where = `in-cluster config (${dir})`;
  if (!host || !port) throw new Error(`${where}: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set`);
  const read = tokenReader(join(dir, 'token'), where);
  read();
  const caFile = join(dir, 'ca.crt');
  const ca = existsSync(caFile) ? material(where, 'ca.crt', undefined, caFile) : undefined;
  const nsFile = join(dir, 'namespace');
  const namespace = existsSync(nsFile) ? readFileSync(nsFile, 'utf8').trim() || undefined : undefined;
  return {
    info: {
      source: `in-cluster ${dir}`,
      context: 'in-cluster',
      cluster: 'in-cluster',
      user: 'in-cluster',
      server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
      namespace,
      ca,
      insecureSkipTlsVerify: false,
      tlsServerName: undefined,
      auth: ['token-file'],
      impersonate: undefined,
    },
    tls: { ca },
    headers: async () => ({ Authorization: `Bearer ${read()}` }),
  };
}

interface Delegated {
  headers: KubeHeaders;
  cert?: Buffer | string;
  key?: Buffer | string;
}

/**
 * exec plugins and auth providers (oidc, gcp, azure…) are client-node's to run: it is imported here, only
 * for such users, and asked for the headers of each refresh (it caches credentials until they expire).
 */
export async function delegateToClientNode(
  name: string,
  exec: unknown,
  authProvider: unknown,
  info: KubeconfigInfo,
  where: string,
): Promise<() => Promise<Delegated>> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // client-node builds an agent we do not use, and refuses http: servers unless TLS checks are off
    clusters: [
      {
        name: info.cluster,
        server: info.server,
        skipTLSVerify: info.insecureSkipTlsVerify || info.server.startsWith('http:'),
      },
    ],
    // impersonation and TLS stay ours: client-node only computes the Authorization header
    users: [{ name, exec, authProvider }],
    contexts: [{ name: info.context, cluster: info.cluster, user: name }],
    currentContext: info.context,
  });
  return async () => {
    const opts: Delegated = { headers: {} };
    try {
      await kc.applyToHTTPSOptions(opts as never);
    } catch (e) {
      // the plugin's own message (its stderr): what kubectl shows too
      const said = errorText(e).trim().slice(0, 500);
      throw new Error(`${where} failed${said ? `: ${said}` : ' without a message'}`, { cause: e });
    }
    const headers: KubeHeaders = {};
    for (const [k, v] of Object.entries(opts.headers)) if (!/^impersonate-/i.test(k)) headers[k] = v;
    return { headers, cert: opts.cert, key: opts.key };
  };
}
