/**
 * A fuzz pass over the PackageSync's string fields as a tenant would send them (issue 35): CR/LF, NUL, "/", "..",
 * very long and non-ASCII values.
 * - Every field the CRD gives a pattern (names, namespaces, keys, durations…) is refused by the real API server
 *   for every hostile value, with the field named: the patterns hold in the API server's RE2 as in JavaScript.
 * - The fields checked by the controller instead (the git URL, path and ref, Helm values files, kustomize
 *   components) are accepted at admission and fail that one PackageSync with a clear reason (never InternalError,
 *   never a raw control character in the message), while another tenant's PackageSync keeps applying commits.
 * The tenant acts with its own ServiceAccount token (e2e/tenant-isolation.test.ts has the helper's twin).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApiError } from '../src/adapters/kube/client.ts';
import { packageSyncCRD } from '../src/api/crd.ts';
import type { PackageSync, SpecInput } from '../src/api/packagesync.ts';
import { conditionOf } from '../src/core/status.ts';
import { eventually, kube } from './support/cluster.ts';
import { createPackageSync, getPackageSync, packageSync, type ControllerHandle } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';
import { tenantClient } from './support/tenant.ts';

const HOSTILE: [string, string][] = [
  ['CR/LF', 'a\r\nImpersonate-Group: system:masters'],
  ['NUL', 'a\0b'],
  ['slash', 'other-ns/x'],
  ['dot-dot', '..'],
  ['long', 'a'.repeat(5000)],
  ['non-ASCII', 'déployé-部署'],
];

let env: GitEnv;
let controller: ControllerHandle;

beforeAll(async () => {
  env = await startGitEnv(false);
  controller = await env.startController({ allowCrossNamespace: false, args: ['--no-cross-namespace-refs'] });
}, 600_000);
afterAll(async () => {
  await env?.dispose();
});

type Schema = {
  type?: string;
  pattern?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
};

/** Every string field of the spec that carries a pattern, as a path of property names ('0' for an array item). */
function patternFields(s: Schema, path: string[] = []): string[][] {
  if (s.type === 'string') return s.pattern ? [path] : [];
  if (s.type === 'array' && s.items) return patternFields(s.items, [...path, '0']);
  return Object.entries(s.properties ?? {}).flatMap(([k, v]) => patternFields(v, [...path, k]));
}

/** The smallest value the schema accepts at `s`, with `leaf` set at `path` below it. */
function build(s: Schema, path: string[], leaf: string): unknown {
  if (path.length === 0) return leaf;
  const [head, ...rest] = path as [string, ...string[]];
  if (s.type === 'array') return [build(s.items!, rest, leaf)];
  const out: Record<string, unknown> = {};
  for (const r of s.required ?? []) if (r !== head) out[r] = minimal(s.properties![r]!);
  out[head] = build(s.properties![head]!, rest, leaf);
  return out;
}

function minimal(s: Schema): unknown {
  if (s.enum) return s.enum[0];
  if (s.type === 'string') return 'a';
  if (s.type === 'boolean') return false;
  if (s.type === 'integer' || s.type === 'number') return 1;
  if (s.type === 'array') return [];
  const out: Record<string, unknown> = {};
  for (const r of s.required ?? []) out[r] = minimal(s.properties![r]!);
  return out;
}

describe('a tenant fuzzing the CRD', () => {
  it('is refused at admission, naming the field, for every hostile value of every field with a pattern', async () => {
    const ns = await env.namespace('e2e-fuzz-admission');
    const tenant = await tenantClient(ns, 'tenant');
    const specSchema = (
      packageSyncCRD() as {
        spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: Schema } } } }[] };
      }
    ).spec.versions[0]!.schema.openAPIV3Schema.properties.spec;
    const fields = patternFields(specSchema);
    expect(fields.length).toBeGreaterThan(15);
    const accepted: string[] = [];
    let n = 0;
    for (const field of fields) {
      for (const [what, value] of HOSTILE) {
        const spec = build(specSchema, field, value) as Record<string, Record<string, unknown>>;
        // exactly one of url and oci (a CEL rule): git unless the field is under source.oci
        spec.source ??= {};
        if (!('oci' in spec.source)) spec.source.url = 'http://127.0.0.1:1/x.git';
        const name = `f${n++}`;
        const e = await tenant
          .request('POST', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs`, {
            body: packageSync(ns, name, controller.shard, spec as unknown as SpecInput),
          })
          .catch((x: unknown) => x);
        if (!(e instanceof KubeApiError)) {
          // a value the pattern allows: only "..", "/" or a long value on a field that takes paths would be; none
          // of those has a pattern here, so any acceptance is a hole
          accepted.push(`spec.${field.join('.')} ${what}`);
          continue;
        }
        expect(e.status, `spec.${field.join('.')} ${what}: ${e.message}`).toBe(422);
        // the API server's spelling: spec.helm.valuesFrom[0].name
        expect(e.message).toContain(`spec.${field.join('.').replace(/\.0(?=\.|$)/g, '[0]')}`);
      }
    }
    expect(accepted).toEqual([]);
  });

  it('fails only that PackageSync, with a clear reason, on fields the controller checks, while another tenant applies', async () => {
    const ns = await env.namespace('e2e-fuzz-tenant');
    const other = await env.namespace('e2e-fuzz-other');
    const tenant = await tenantClient(ns, 'tenant');
    const { repo, url } = await env.repo('fuzz-canary', { 'cm.yaml': configMap('canary', { v: 'one' }) });
    await createPackageSync(packageSync(other, 'canary', controller.shard, { source: { url }, interval: '5s' }));

    const git = (source: Record<string, unknown>) => ({ source: { url, ...source } });
    const fields: [string, (v: string) => Record<string, unknown>][] = [
      ['source.url', (v) => ({ source: { url: v } })],
      ['source.path', (v) => git({ path: v })],
      ['source.ref.branch', (v) => git({ ref: { branch: v } })],
      ['source.ref.tag', (v) => git({ ref: { tag: v } })],
      ['source.ref.semver', (v) => git({ ref: { semver: v } })],
      ['source.ref.commit', (v) => git({ ref: { commit: v } })],
      ['helm.valuesFiles', (v) => ({ ...git({}), helm: { valuesFiles: [v] } })],
      ['kustomize.components', (v) => ({ ...git({}), kustomize: { components: [v] } })],
    ];
    const created: { name: string; field: string; what: string }[] = [];
    let n = 0;
    for (const [field, spec] of fields) {
      for (const [what, value] of HOSTILE) {
        const name = `c${n++}`;
        const e = await tenant
          .request<PackageSync>('POST', `/apis/packagesync.io/v1alpha1/namespaces/${ns}/packagesyncs`, {
            body: packageSync(ns, name, controller.shard, { interval: '1h', ...spec(value) } as SpecInput),
          })
          .catch((x: unknown) => x);
        if (e instanceof KubeApiError) expect(e.status, `${field} ${what}`).toBe(422);
        else created.push({ name, field, what });
      }
    }
    expect(created.length).toBeGreaterThan(20);

    // the other tenant's PackageSync applies a new commit while these fail
    await env.commit(repo, { 'cm.yaml': configMap('canary', { v: 'two' }) });
    const admin = await kube();
    await eventually(
      'the other tenant applied the new commit',
      async () =>
        (
          await admin
            .request<{ data?: { v?: string } }>('GET', `/api/v1/namespaces/${other}/configmaps/canary`)
            .catch(() => undefined)
        )?.data?.v === 'two',
      { timeoutMs: 120_000 },
    );

    for (const c of created) {
      const ready = await eventually(
        `${c.field} ${c.what}: a reason`,
        async () => {
          const r = conditionOf((await getPackageSync(ns, c.name))?.status, 'Ready');
          return r && r.status !== 'Unknown' && r;
        },
        { timeoutMs: 120_000 },
      );
      expect(ready.status, `${c.field} ${c.what}: ${ready.message}`).toBe('False');
      expect(ready.reason, `${c.field} ${c.what}: ${ready.message}`).not.toBe('InternalError');
      expect(ready.message, `${c.field} ${c.what}`).not.toMatch(/[\r\n\0]/);
      expect(ready.message.length, `${c.field} ${c.what}`).toBeLessThan(2000);
    }
  });
});
