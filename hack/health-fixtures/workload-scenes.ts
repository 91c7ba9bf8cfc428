/** Scenes of the replica controllers (Deployment, ReplicaSet, StatefulSet, DaemonSet) and their Pods. */
import {
  conditionOf,
  deploymentOf,
  FAILURE,
  restarts,
  scene,
  status,
  waitingReason,
  workload,
  yaml,
  type PodOptions,
  type Scene,
} from './scene.ts';

export const WORKLOAD_SCENES: Scene[] = [
  {
    name: 'deployment',
    async run(ctx) {
      await ctx.apply(workload('Deployment', 'web', 3, {}, { progressDeadlineSeconds: 6 }));
      const available = await ctx.until('web available', async () => {
        const d = await deploymentOf(ctx, 'web');
        return status(d).availableReplicas === 3 && conditionOf(d, 'Available')?.status === 'True' && d;
      });
      const [rs] = await ctx.list('apps/v1', 'ReplicaSet', 'app=web');
      const [ready] = await ctx.list('v1', 'Pod', 'app=web');
      // a new template whose Pods never become ready: the rollout stops at one updated replica
      await ctx.apply(workload('Deployment', 'web', 3, { failure: 'NotReady' }, { progressDeadlineSeconds: 6 }));
      const progressing = await ctx.until('web progressing', async () => {
        const d = await deploymentOf(ctx, 'web');
        return status(d).observedGeneration === 2 && status(d).updatedReplicas === 1 && d;
      });
      const exceeded = await ctx.until('web deadline exceeded', async () => {
        const d = await deploymentOf(ctx, 'web');
        return conditionOf(d, 'Progressing')?.reason === 'ProgressDeadlineExceeded' && d;
      });
      return {
        'deployment-available.yaml': [available],
        'replicaset-available.yaml': [rs!],
        'pod-running-ready.yaml': [ready!],
        'deployment-progressing.yaml': [progressing],
        'deployment-deadline-exceeded.yaml': [exceeded],
      };
    },
  },
  {
    name: 'explain-deployment-image-pull',
    async run(ctx) {
      await ctx.apply(workload('Deployment', 'web', 2, { failure: 'ImagePullBackOff', image: 'nope:1' }));
      await ctx.until('pods in ImagePullBackOff', async () => {
        const pods = await ctx.list('v1', 'Pod', 'app=web');
        return pods.length === 2 && pods.every((p) => waitingReason(p) === 'ImagePullBackOff');
      });
      const docs = await scene(ctx, 'Deployment', 'web');
      return { 'explain-deployment-image-pull.yaml': docs, 'pod-image-pull-backoff.yaml': [docs.at(-1)!] };
    },
  },
  {
    name: 'explain-deployment-crash-loop-deadline',
    async run(ctx) {
      await ctx.apply(workload('Deployment', 'web', 3, {}, { progressDeadlineSeconds: 8 }));
      await ctx.until('web available', async () => status(await deploymentOf(ctx, 'web')).availableReplicas === 3);
      await ctx.apply(
        workload('Deployment', 'web', 3, { failure: 'CrashLoopBackOff' }, { progressDeadlineSeconds: 8 }),
      );
      await ctx.until('deadline exceeded, crash loop at its cap', async () => {
        const d = await deploymentOf(ctx, 'web');
        const pods = await ctx.list('v1', 'Pod', `app=web,${FAILURE}=CrashLoopBackOff`);
        return (
          conditionOf(d, 'Progressing')?.reason === 'ProgressDeadlineExceeded' && pods.every((p) => restarts(p) === 10)
        );
      });
      const docs = await scene(ctx, 'Deployment', 'web');
      const crashing = docs.filter((d) => d.kind === 'Pod' && d.metadata.labels?.[FAILURE]);
      return { 'explain-deployment-crash-loop-deadline.yaml': docs, 'pod-crash-loop.yaml': [crashing[0]!] };
    },
  },
  {
    name: 'explain-deployment-quota',
    async run(ctx) {
      await ctx.apply(
        yaml({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute' }, spec: { hard: { pods: '0' } } }),
      );
      await ctx.until('quota counted', async () => {
        const q = await ctx.get('v1', 'ResourceQuota', 'compute');
        return (status(q).hard as Record<string, string> | undefined)?.pods === '0';
      });
      await ctx.apply(workload('Deployment', 'web', 2, {}));
      await ctx.until('replica failure, seen by the Deployment', async () => {
        const [rs] = await ctx.list('apps/v1', 'ReplicaSet', 'app=web');
        const d = await deploymentOf(ctx, 'web');
        return (
          conditionOf(rs, 'ReplicaFailure')?.status === 'True' &&
          conditionOf(d, 'ReplicaFailure')?.status === 'True' &&
          status(d).observedGeneration === 1
        );
      });
      const docs = await scene(ctx, 'Deployment', 'web');
      for (const m of JSON.stringify(docs).matchAll(/pods \\"(web-[a-z0-9]+-)([a-z0-9]{5})\\"/g)) {
        ctx.rename(`${m[1]}${m[2]}`, `${m[1]}x7k2p`);
      }
      return { 'explain-deployment-quota.yaml': docs, 'replicaset-quota-exceeded.yaml': [docs[1]!] };
    },
  },
  {
    name: 'statefulset',
    async run(ctx) {
      const sts = (o: PodOptions, partition?: number) =>
        workload(
          'StatefulSet',
          'db',
          3,
          o,
          partition ? { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition } } } : {},
        );
      await ctx.apply(sts({}));
      const get = () => ctx.get('apps/v1', 'StatefulSet', 'db');
      const ready = await ctx.until('db ready', async () => {
        const s = await get();
        return status(s).readyReplicas === 3 && status(s).currentRevision === status(s).updateRevision && s;
      });
      await ctx.apply(sts({ image: 'registry.local/db:1.1' }, 2));
      const partitioned = await ctx.until('db partitioned', async () => {
        const s = await get();
        return (
          status(s).observedGeneration === 2 && status(s).updatedReplicas === 1 && status(s).readyReplicas === 3 && s
        );
      });
      await ctx.apply(sts({ image: 'registry.local/db:1.2', failure: 'NotReady' }));
      const rolling = await ctx.until('db rolling', async () => {
        const s = await get();
        return (
          status(s).observedGeneration === 3 && status(s).updatedReplicas === 1 && status(s).readyReplicas === 2 && s
        );
      });
      return {
        'statefulset-ready.yaml': [ready],
        'statefulset-partitioned.yaml': [partitioned],
        'statefulset-rolling.yaml': [rolling],
      };
    },
  },
  {
    name: 'explain-statefulset-unschedulable',
    async run(ctx) {
      await ctx.apply(workload('StatefulSet', 'db', 3, { nodeSelector: { disktype: 'nvme' } }));
      await ctx.until('db-0 unschedulable, counted', async () => {
        const p = await ctx.get('v1', 'Pod', 'db-0');
        const s = await ctx.get('apps/v1', 'StatefulSet', 'db');
        return conditionOf(p, 'PodScheduled')?.reason === 'Unschedulable' && status(s).replicas === 1;
      });
      const docs = await scene(ctx, 'StatefulSet', 'db');
      return { 'explain-statefulset-unschedulable.yaml': docs, 'pod-unschedulable.yaml': [docs[1]!] };
    },
  },
  {
    name: 'daemonset',
    async run(ctx) {
      await ctx.apply(workload('DaemonSet', 'agent', 0, {}));
      const get = () => ctx.get('apps/v1', 'DaemonSet', 'agent');
      const ready = await ctx.until('agent ready', async () => {
        const d = await get();
        return status(d).numberAvailable === 1 && status(d).updatedNumberScheduled === 1 && d;
      });
      await ctx.apply(workload('DaemonSet', 'agent', 0, { failure: 'NotReady', image: 'registry.local/agent:1.1' }));
      const rolling = await ctx.until('agent rolling', async () => {
        const d = await get();
        // a count of zero is left out of the status
        return (
          status(d).observedGeneration === 2 &&
          status(d).updatedNumberScheduled === 1 &&
          !status(d).numberAvailable &&
          d
        );
      });
      return { 'daemonset-ready.yaml': [ready], 'daemonset-rolling.yaml': [rolling] };
    },
  },
];
