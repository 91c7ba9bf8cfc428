/**
 * The API server's floor for a package: the least any controller must do to create it. One server-side
 * apply PATCH per object, 32 in flight, over keep-alive connections (one undici Pool), bodies serialised
 * once up front. No git, no render, no inventory, no status, no health: whatever PackageSync spends above
 * this is its own overhead.
 */
import { Pool } from 'undici';
import { loadKubeconfig } from '../../src/adapters/kube/kubeconfig.ts';

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

const PLURALS: Record<string, string> = {
  ConfigMap: 'configmaps',
  Deployment: 'deployments',
  Service: 'services',
  ServiceAccount: 'serviceaccounts',
};

/** Overload answers worth asking again (429 Too Many Requests, 5xx): a saturated API server sheds, it is not wrong. */
const RETRIABLE = new Set([429, 500, 503, 504]);

export async function applyFloor(
  kubeconfig: string,
  namespace: string,
  docs: Record<string, unknown>[],
  inFlight = 32,
  /** Called just before the first request (after the bodies are serialised): the fleet floor's clocks start here. */
  onStart?: () => void,
): Promise<{ seconds: number; requests: number; retries: number; answered: number }> {
  const kc = await loadKubeconfig({ path: kubeconfig });
  const auth = await kc.headers();
  const pool = new Pool(kc.info.server, {
    connections: inFlight,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: kc.tls,
  });
  const requests = (docs as unknown as Doc[]).map((d) => {
    const base = d.apiVersion === 'v1' ? '/api/v1' : `/apis/${d.apiVersion}`;
    return {
      path: `${base}/namespaces/${namespace}/${PLURALS[d.kind]}/${d.metadata.name}?fieldManager=bench-floor`,
      body: JSON.stringify({ ...d, metadata: { ...d.metadata, namespace } }),
    };
  });
  onStart?.();
  const started = performance.now();
  let next = 0;
  let retries = 0;
  // PATCHes this client saw answered 2xx: its own count, which no other client of the API server can move
  let answered = 0;
  const worker = async () => {
    while (next < requests.length) {
      const r = requests[next++]!;
      for (let attempt = 0; ; attempt++) {
        const res = await pool.request({
          method: 'PATCH',
          path: r.path,
          body: r.body,
          headers: { ...auth, 'content-type': 'application/apply-patch+yaml', accept: 'application/json' },
        });
        const text = await res.body.text();
        if (res.statusCode < 300) {
          answered++;
          break;
        }
        if (!RETRIABLE.has(res.statusCode) || attempt >= 5)
          throw new Error(`floor: ${r.path}: ${res.statusCode} ${text.slice(0, 200)}`);
        retries++;
        const after = Number(res.headers['retry-after']);
        await new Promise((w) => setTimeout(w, (Number.isFinite(after) && after > 0 ? after : 2 ** attempt) * 1000));
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { seconds, requests: requests.length, retries, answered };
}
