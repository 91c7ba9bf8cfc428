/**
 * The API server's floor for a package: the least any controller must do to create it. One server-side
 * apply PATCH per object, 32 in flight, over keep-alive connections (one undici Pool), bodies serialised
 * once up front. No git, no render, no inventory, no status, no health: whatever PackageSync spends above
 * this is its own overhead.
 */
import { Pool } from 'undici';
import { loadKubeconfig } from '../../src/adapters/kube/kubeconfig.ts';

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

const PLURALS: Record<string, string> = { ConfigMap: 'configmaps', Deployment: 'deployments' };

export async function applyFloor(
  kubeconfig: string,
  namespace: string,
  docs: Record<string, unknown>[],
  inFlight = 32,
): Promise<{ seconds: number; requests: number }> {
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
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const r = requests[next++]!;
      const res = await pool.request({
        method: 'PATCH',
        path: r.path,
        body: r.body,
        headers: { ...auth, 'content-type': 'application/apply-patch+yaml', accept: 'application/json' },
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`floor: ${r.path}: ${res.statusCode} ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { seconds, requests: requests.length };
}
