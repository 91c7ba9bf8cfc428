/** Scenes of bare Pods, Jobs, storage, Services, PDBs, CRDs and objects being deleted. */
import type { KubeObject } from '../../src/core/object.ts';
import { conditionOf, job, pod, restarts, scene, status, waitingReason, workload, yaml, type Scene } from './scene.ts';

export const OTHER_SCENES: Scene[] = [
  {
    name: 'pods',
    async run(ctx) {
      await ctx.apply(
        [
          pod('not-ready', { failure: 'NotReady' }),
          pod('err-image-pull', {
            failure: 'ImagePullBackOff',
            image: 'nope:1',
            annotations: { 'e2e.packagesync.io/backoff-delay': '1h' },
          }),
          pod('first-crash', {
            failure: 'CrashLoopBackOff',
            annotations: { 'e2e.packagesync.io/restart-delay': '1h' },
          }),
          pod('failed', { failure: 'Error' }, 'Never'),
        ].join('\n---\n'),
      );
      const get = (name: string, ok: (p: KubeObject) => boolean) =>
        ctx.until(name, async () => {
          const p = await ctx.get('v1', 'Pod', name);
          return p && ok(p) && p;
        });
      return {
        'pod-running-not-ready.yaml': [await get('not-ready', (p) => status(p).phase === 'Running')],
        'pod-err-image-pull.yaml': [await get('err-image-pull', (p) => waitingReason(p) === 'ErrImagePull')],
        'pod-crash-loop-first-restart.yaml': [await get('first-crash', (p) => restarts(p) === 1)],
        'pod-failed.yaml': [await get('failed', (p) => status(p).phase === 'Failed')],
      };
    },
  },
  {
    name: 'jobs',
    async run(ctx) {
      await ctx.apply(
        [
          job('complete', {}),
          job('failed', { failure: 'Error' }),
          job('running', { failure: 'NotReady' }),
          job('suspended', {}, { suspend: true }),
        ].join('\n---\n'),
      );
      const get = (name: string, ok: (j: KubeObject) => boolean) =>
        ctx.until(name, async () => {
          const j = await ctx.get('batch/v1', 'Job', name);
          return j && ok(j) && j;
        });
      const complete = await get('complete', (j) => conditionOf(j, 'Complete')?.status === 'True');
      const [succeeded] = await ctx.list('v1', 'Pod', 'job-name=complete');
      return {
        'job-complete.yaml': [complete],
        'pod-succeeded.yaml': [succeeded!],
        'job-failed.yaml': [await get('failed', (j) => conditionOf(j, 'Failed')?.status === 'True')],
        'job-running.yaml': [await get('running', (j) => status(j).active === 1)],
        'job-suspended.yaml': [await get('suspended', (j) => conditionOf(j, 'Suspended')?.status === 'True')],
      };
    },
  },
  {
    name: 'explain-job-retrying',
    async run(ctx) {
      await ctx.apply(job('migrate', { failure: 'Error' }, { backoffLimit: 3 }));
      await ctx.until('one failed, one retrying', async () => {
        const j = await ctx.get('batch/v1', 'Job', 'migrate');
        return status(j).failed === 1 && status(j).active === 1;
      });
      const docs = await scene(ctx, 'Job', 'migrate');
      return { 'explain-job-retrying.yaml': docs };
    },
  },
  {
    name: 'storage-and-services',
    async run(ctx) {
      const pv = `fixtures-${ctx.namespace.slice(-4)}`;
      await ctx.apply(
        [
          yaml({
            apiVersion: 'v1',
            kind: 'PersistentVolume',
            metadata: { name: pv },
            spec: {
              capacity: { storage: '1Gi' },
              accessModes: ['ReadWriteOnce'],
              storageClassName: 'manual',
              hostPath: { path: '/tmp/pv' },
            },
          }),
          yaml({
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: { name: 'data' },
            spec: {
              accessModes: ['ReadWriteOnce'],
              storageClassName: 'manual',
              volumeName: pv,
              resources: { requests: { storage: '1Gi' } },
            },
          }),
          yaml({
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: { name: 'pending' },
            spec: {
              accessModes: ['ReadWriteOnce'],
              storageClassName: 'none',
              resources: { requests: { storage: '1Gi' } },
            },
          }),
          yaml({
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'web' },
            spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
          }),
          yaml({
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'edge' },
            spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ port: 443 }] },
          }),
          yaml({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { color: 'blue' } }),
        ].join('\n---\n'),
      );
      ctx.rename(pv, 'pvc-7f703670-091b-4707-93b1-6e8cc3441a52');
      const bound = await ctx.until('pvc bound', async () => {
        const c = await ctx.get('v1', 'PersistentVolumeClaim', 'data');
        return status(c).phase === 'Bound' && c;
      });
      return {
        'pvc-bound.yaml': [bound],
        'pvc-pending.yaml': [(await ctx.get('v1', 'PersistentVolumeClaim', 'pending'))!],
        'service-cluster-ip.yaml': [(await ctx.get('v1', 'Service', 'web'))!],
        'service-load-balancer-pending.yaml': [(await ctx.get('v1', 'Service', 'edge'))!],
        'configmap.yaml': [(await ctx.get('v1', 'ConfigMap', 'settings'))!],
      };
    },
    async cleanup(ctx) {
      await ctx.request('DELETE', `/api/v1/persistentvolumes/fixtures-${ctx.namespace.slice(-4)}`);
    },
  },
  {
    name: 'pdb-and-crd',
    async run(ctx) {
      const group = `${ctx.namespace}.example.com`;
      await ctx.apply(
        [
          workload('Deployment', 'web', 3, {}),
          yaml({
            apiVersion: 'policy/v1',
            kind: 'PodDisruptionBudget',
            metadata: { name: 'web' },
            spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
          }),
          yaml({
            apiVersion: 'apiextensions.k8s.io/v1',
            kind: 'CustomResourceDefinition',
            metadata: { name: `widgets.${group}` },
            spec: {
              group,
              names: { kind: 'Widget', plural: 'widgets', singular: 'widget' },
              scope: 'Namespaced',
              versions: [
                {
                  name: 'v1',
                  served: true,
                  storage: true,
                  schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
                },
              ],
            },
          }),
        ].join('\n---\n'),
      );
      const pdb = await ctx.until('pdb counted', async () => {
        const p = await ctx.get('policy/v1', 'PodDisruptionBudget', 'web');
        return status(p).currentHealthy === 3 && status(p).disruptionsAllowed === 1 && p;
      });
      const crd = await ctx.until('crd established', async () => {
        const c = await ctx.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', `widgets.${group}`, '');
        return conditionOf(c, 'Established')?.status === 'True' && c;
      });
      const clean = JSON.parse(JSON.stringify(crd).replaceAll(group, 'example.com')) as KubeObject;
      return { 'pdb.yaml': [pdb], 'crd-established.yaml': [clean] };
    },
    async cleanup(ctx) {
      await ctx.request(
        'DELETE',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${ctx.namespace}.example.com`,
      );
    },
  },
  {
    name: 'terminating',
    async run(ctx) {
      const held = (name: string) =>
        yaml({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, finalizers: ['example.com/keep'] },
          data: { k: 'v' },
        });
      await ctx.apply(held('settings'));
      await ctx.request('DELETE', `/api/v1/namespaces/${ctx.namespace}/configmaps/settings`);
      const cm = await ctx.until('configmap terminating', async () => {
        const c = await ctx.get('v1', 'ConfigMap', 'settings');
        return c?.metadata.deletionTimestamp ? c : undefined;
      });
      await ctx.request('DELETE', `/api/v1/namespaces/${ctx.namespace}`);
      const ns = await ctx.until('namespace terminating', async () => {
        const n = await ctx.get('v1', 'Namespace', ctx.namespace, '');
        return status(n).phase === 'Terminating' && (n?.spec as { finalizers?: string[] })?.finalizers && n;
      });
      return { 'configmap-terminating.yaml': [cm], 'namespace-terminating.yaml': [ns] };
    },
    async cleanup(ctx) {
      await ctx.request('PUT', `/api/v1/namespaces/${ctx.namespace}/configmaps/settings`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', namespace: ctx.namespace, finalizers: [] },
      });
    },
  },
];
