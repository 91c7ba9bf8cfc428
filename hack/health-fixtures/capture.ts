/**
 * Captures the golden objects of src/core/health/testdata from the local control plane: creates each
 * scene (kwok's failure stages in hack/kwok-stages make Pods fail on purpose), waits until it shows what
 * the fixture is about, and writes the objects as the API server returned them, made stable: one
 * namespace (team-a), fixed uids, timestamps and generated-name suffixes, no managedFields.
 *
 *   node hack/health-fixtures/capture.ts [name-prefix ...]    (the cluster must be up: hack/cluster.sh up)
 *
 * Fixtures of states the local cluster cannot produce (an evicted or OOM-killed Pod, a LoadBalancer with
 * an address, a CRD names conflict, ...) stay hand-written; captured files say so in their first line.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { stringify } from 'yaml';
import { KubeClient } from '../../src/adapters/kube/client.ts';
import { Discovery } from '../../src/adapters/kube/discovery.ts';
import { Objects } from '../../src/adapters/kube/objects.ts';
import type { KubeObject } from '../../src/core/object.ts';
import { OTHER_SCENES } from './other-scenes.ts';
import type { Scene, SceneContext } from './scene.ts';
import { WORKLOAD_SCENES } from './workload-scenes.ts';

const SCENES = [...WORKLOAD_SCENES, ...OTHER_SCENES];

const root = resolve(import.meta.dirname, '../..');
const out = resolve(root, 'src/core/health/testdata');
const FIXED_TIME = '2026-01-01T00:00:00Z';
const SUFFIXES = ['abcde', 'fghij', 'klmno', 'pqrst', 'uvwxy', 'z2b4d', 'k7m9p', 'q8xzt'];

const client = await KubeClient.create({ kubeconfig: process.env.KUBECONFIG ?? resolve(root, '.cluster/kubeconfig') });
const objects = new Objects(client, new Discovery(client));
const only = process.argv.slice(2);
const scenes = SCENES.filter((s) => only.length === 0 || only.some((p) => s.name.startsWith(p)));

let failed = 0;
await Promise.all(
  scenes.map(async (scene) => {
    try {
      await capture(scene);
    } catch (e) {
      failed++;
      console.error(`${scene.name}: ${(e as Error).message}`);
    }
  }),
);
await client.close();
process.exit(failed ? 1 : 0);

async function capture(scene: Scene): Promise<void> {
  const namespace = `fixtures-${scene.name.slice(0, 40)}-${randomBytes(2).toString('hex')}`.replace(/-+/g, '-');
  await client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: namespace } } });
  const ctx = context(namespace);
  try {
    const files = await scene.run(ctx);
    for (const [file, docs] of Object.entries(files)) {
      const text = stable(docs, namespace, [...ctx.renames]);
      writeFileSync(
        resolve(out, file),
        `# Captured from the local control plane by hack/health-fixtures/capture.ts\n${text}`,
      );
      console.log(`wrote testdata/${file}`);
    }
  } finally {
    await scene.cleanup?.(ctx).catch(() => undefined);
    await client.request('DELETE', `/api/v1/namespaces/${namespace}`).catch(() => undefined);
  }
}

function context(namespace: string): SceneContext & { renames: Map<string, string> } {
  const renames = new Map<string, string>();
  const ctx: SceneContext & { renames: Map<string, string> } = {
    namespace,
    renames,
    async apply(yaml) {
      for (const doc of yaml.split(/^---$/m).filter((d) => d.trim())) {
        const obj = (await import('yaml')).parse(doc) as KubeObject;
        if (obj.kind !== 'Namespace' && !obj.metadata.namespace) obj.metadata.namespace = namespace;
        await objects.apply(obj, { force: true });
      }
    },
    get: async (apiVersion, kind, name, ns = namespace) => {
      const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
      const o = await objects.get({ group, kind, namespace: ns, name });
      return o ? { ...o, apiVersion, kind } : undefined;
    },
    list: async (apiVersion, kind, selector = '') => {
      const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
      const m = await objects.discovery.mapping(group, kind);
      const items = m ? await objects.list(m, namespace, selector) : [];
      return items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    },
    request: (method, path, body) => client.request(method, path, body === undefined ? {} : { body }),
    until: async (what, probe, timeoutMs = 90_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const v = await probe().catch(() => undefined);
        if (v) return v;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    rename: (from, to) => void renames.set(from, to),
  };
  return ctx;
}

/**
 * The objects as YAML that stays the same from one capture to the next: the scene's namespace becomes
 * team-a, uids become fixed ones in order of appearance, timestamps one fixed instant, and the random
 * suffix of generated names (Pods, Jobs' Pods) a fixed one, everywhere they appear (messages included).
 */
function stable(docs: KubeObject[], namespace: string, renames: [string, string][]): string {
  const cleaned = docs.map((d) => {
    const { managedFields: _m, resourceVersion: _r, ...metadata } = d.metadata;
    const { apiVersion, kind, metadata: _old, spec, status, ...rest } = d;
    return { apiVersion, kind, metadata, ...rest, spec, status };
  });
  let text = cleaned.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');
  const uids = [...new Set(text.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g) ?? [])];
  uids.forEach((uid, i) => (text = text.replaceAll(uid, `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`)));
  // StatefulSet Pods carry a generateName too, but their names are ordinals: only random suffixes go
  const generated = cleaned
    .filter((d) => typeof d.metadata.generateName === 'string')
    .filter((d) => new RegExp(`^${d.metadata.generateName as string}[a-z0-9]{5}$`).test(d.metadata.name))
    .map((d) => ({ name: d.metadata.name, prefix: d.metadata.generateName as string }));
  const byPrefix = new Map<string, number>();
  for (const g of [...generated].sort((a, b) => a.name.localeCompare(b.name))) {
    const n = byPrefix.get(g.prefix) ?? 0;
    byPrefix.set(g.prefix, n + 1);
    text = text.replaceAll(g.name, `${g.prefix}${SUFFIXES[n % SUFFIXES.length]}`);
  }
  for (const [from, to] of renames) text = text.replaceAll(from, to);
  text = text.replaceAll(namespace, 'team-a');
  text = text.replace(/'?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z'?/g, `'${FIXED_TIME}'`);
  text = text.replace(/containerd:\/\/[0-9a-f]{64}/g, `containerd://${'0'.repeat(64)}`);
  // random per Pod as well: the token volume's suffix and the Pod IP kwok hands out
  text = text.replace(/kube-api-access-[a-z0-9]{5}/g, 'kube-api-access-abcde');
  text = text.replace(/10\.244\.\d+\.\d+/g, '10.244.0.10');
  text = text.replace(/10\.96\.\d+\.\d+/g, '10.96.0.10');
  text = text.replace(/nodePort: \d+/g, 'nodePort: 30080');
  return text;
}
