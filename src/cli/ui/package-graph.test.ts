import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../core/object.ts';
import { packageGraph, type GraphItem } from './package-graph.ts';

const obj = (apiVersion: string, kind: string, name: string, extra: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion, kind, metadata: { name, namespace: 'a', ...extra } }) as KubeObject;

const configMap = obj('v1', 'ConfigMap', 'settings', { uid: 'u-cm' });
const deployment = obj('apps/v1', 'Deployment', 'web', {
  uid: 'u-deploy',
  annotations: { 'config.kubernetes.io/depends-on': '/namespaces/a/ConfigMap/settings' },
});
const owned = (kind: string, name: string, uid: string, owner: string) =>
  obj(kind === 'Pod' ? 'v1' : 'apps/v1', kind, name, {
    uid,
    ownerReferences: [{ uid: owner, controller: true, kind: 'x', name: 'x', apiVersion: 'v1' }],
  });

const item = (live: KubeObject): GraphItem => ({
  ref: {
    group: live.apiVersion.includes('/') ? live.apiVersion.split('/')[0]! : '',
    kind: live.kind,
    namespace: 'a',
    name: live.metadata.name,
  },
  live,
  health: 'Current',
  message: '',
});
const secret: GraphItem = {
  ref: { group: '', kind: 'Secret', namespace: 'a', name: 'creds' },
  health: 'Unknown',
  message: 'Secrets are not read by the UI',
};

describe('the package graph a PackageSync page draws', () => {
  const rs = owned('ReplicaSet', 'web-1', 'u-rs', 'u-deploy');
  const pods = [owned('Pod', 'web-1-b', 'u-p2', 'u-rs'), owned('Pod', 'web-1-a', 'u-p1', 'u-rs')];
  const stranger = owned('Pod', 'other', 'u-x', 'u-nobody');
  const g = packageGraph([item(deployment), secret, item(configMap)], [...pods, rs, stranger]);
  const node = (name: string) => g.nodes.find((n) => n.name === name)!;

  it('numbers the objects in apply order, an unread Secret in its kind place, and columns by dependency', () => {
    expect(['settings', 'creds', 'web'].map((n) => node(n).order)).toEqual([1, 2, 3]);
    expect(node('settings').column).toBe(0);
    expect(node('web').column).toBe(1);
    expect(g.edges).toContainEqual({ from: '/ConfigMap/a/settings', to: 'apps/Deployment/a/web', kind: 'dependsOn' });
  });

  it("draws what a workload owns to its right, beside it, and nothing that is not the package's", () => {
    expect(node('web-1')).toMatchObject({ column: 2, owned: true, parent: 'apps/Deployment/a/web' });
    expect([node('web-1-a').column, node('web-1-b').column]).toEqual([3, 3]);
    expect(node('web-1-a').row).toBeLessThan(node('web-1-b').row);
    expect(g.nodes.find((n) => n.name === 'other')).toBeUndefined();
    expect(g.edges.filter((e) => e.kind === 'owner')).toHaveLength(3);
    expect(g.columns).toBe(4);
  });

  it('says what it could not order, and still draws every object', () => {
    const cycle = (name: string, on: string) =>
      obj('v1', 'ConfigMap', name, {
        annotations: { 'config.kubernetes.io/depends-on': `/namespaces/a/ConfigMap/${on}` },
      });
    const broken = packageGraph([item(cycle('x', 'y')), item(cycle('y', 'x'))], []);
    expect(broken.nodes.map((n) => n.name)).toEqual(['x', 'y']);
    expect(broken.notes[0]).toMatch(/^no apply order: /);
  });
});
