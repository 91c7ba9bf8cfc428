/**
 * PackageSyncSets (docs/adr/0042): watches the sets, the cluster Secrets of their namespaces (metadata only: no
 * Secret value reaches this process) and, through the manager's watch, their child PackageSyncs; each pass runs
 * the pure rollout step and then writes — status first (an update guarded by resourceVersion), children after —
 * so a crash or a leader change between the two re-derives the same pins from the status written.
 * Runs on the leader only, beside the manager.
 */
import { createHash } from 'node:crypto';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import {
  durationMs,
  GROUP,
  RECONCILE_REQUESTED_AT,
  VERSION,
  type PackageSync,
  type Spec,
} from '../../api/packagesync.ts';
import {
  APPROVE_ANNOTATION,
  RESUME_ANNOTATION,
  CLUSTER_SECRET_LABEL,
  CLUSTER_SECRET_VALUE,
  SET_LABEL,
  SET_PLURAL,
  setCollectionPath,
  TARGET_ANNOTATION,
  type PackageSyncSet,
  type SetStatus,
} from '../../api/packagesyncset.ts';
import { Informer, type InformerEvent } from '../../adapters/kube/informer.ts';
import { isConflict, isNotFound, type KubeClient } from '../../adapters/kube/client.ts';
import { listClusterSecrets } from '../../adapters/kube/cluster-secrets.ts';
import { packageSyncCollectionPath } from '../../adapters/kube/packagesyncs.ts';
import type { SourcePort } from '../../adapters/git/source-port.ts';
import type { KubeObject } from '../../core/object.ts';
import { errorText } from '../../core/failure.ts';
import { childObject, observationOf, ownedBy, setRef } from '../../core/rollout/child.ts';
import { invalidSpecConditions } from '../../core/rollout/conditions.ts';
import { statusWrite } from '../../core/rollout/progress-only.ts';
import { readSetSpec } from '../../core/rollout/set-spec.ts';
import { sameRevision, type ChildObservation } from '../../core/rollout/observe.ts';
import { gatesToCheck, parseApproval, parseResume, stepRollout, type GateResult } from '../../core/rollout/step.ts';
import { generateTargets, setLabelValue, type ClusterSecret } from '../../core/rollout/targets.ts';
import { WorkQueue } from '../work-queue.ts';
import { checkGate } from './check-gate.ts';
import { resolveSetRevision } from '../../engine/set-revision.ts';
import { RevisionMemo } from './revision-memo.ts';

/** Child PackageSyncs applied at once by one pass (server-side applies, each its own object). */
const CHILD_APPLIES_AT_ONCE = 8;

/** Job gates run as the template's ServiceAccount, else the controller's default one (as its children apply). */
const gateServiceAccount = (sa: string | undefined) => (sa ? { serviceAccount: sa } : {});

export interface SetControllerOptions {
  client: KubeClient;
  /**
   * Resolves the template's ref: git's to a commit (shared ls-remote), OCI's to a digest (resolveArtifact); the
   * engine's sources, same credentials rules.
   */
  source: Pick<SourcePort, 'resolve' | 'resolveArtifact'>;
  readSecret: (namespace: string, name: string) => Promise<Record<string, string> | undefined>;
  /** The manager's PackageSync watch cache (`namespace/name`). */
  packageSyncs: ReadonlyMap<string, KubeObject>;
  /** Settles when that cache holds every PackageSync (its first LIST done). */
  packageSyncsSynced: Promise<void>;
  log: Logger;
  watchNamespace?: string;
  /** --watch-label-selector: this controller's shard of the sets (their children carry the set's labels). */
  labelSelector?: string;
  allowHttp?: boolean;
  concurrency?: number;
  /** --default-service-account: what a Job gate runs as when the template names no serviceAccountName. */
  defaultServiceAccount?: string;
}

const CHILD_DIGEST = 'packagesync.io/child-digest';
const FIELD_MANAGER = 'packagesync-set';
/** Without a deadline to wake for, a set looks again this often (cluster Secrets and refs also wake it). */
const RESYNC_MS = 60_000;
/**
 * A status that changes only in its children's progress (core/rollout/progress-only.ts) is written at most this
 * often: every status write of every child wakes a pass, and a set's status (100 targets: ~30 KB) costs the API
 * server ~10 ms of CPU to store, which a rollout's own children were waiting for (bench/rollout.ts: ~90 writes
 * for 100 targets). Pins, phases and gates are written at once.
 */
const PROGRESS_WRITE_MS = 1_000;

export { setCollectionPath } from '../../api/packagesyncset.ts';
/** Whether the targets generated now are the ones status lists (by name). */
function sameTargets(targets: readonly { name: string }[], listed: readonly { name: string }[] = []): boolean {
  if (targets.length !== listed.length) return false;
  const names = new Set(listed.map((t) => t.name));
  return targets.every((t) => names.has(t.name));
}

const secretsPath = (namespace?: string) =>
  namespace ? `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets` : '/api/v1/secrets';

export class SetController {
  readonly sets: Informer;
  readonly clusterSecrets: Informer;
  readonly queue: WorkQueue;
  private readonly opts: SetControllerOptions;
  private readonly revisions = new RevisionMemo();
  /** When each set's status was last written by this process (PROGRESS_WRITE_MS). */
  private readonly written = new Map<string, number>();

  constructor(opts: SetControllerOptions) {
    this.opts = opts;
    this.sets = new Informer(opts.client, {
      path: setCollectionPath(opts.watchNamespace),
      labelSelector: opts.labelSelector,
      onError: (e) => opts.log.warn({ err: errorText(e) }, 'PackageSyncSet watch interrupted; resuming'),
    });
    this.clusterSecrets = new Informer(opts.client, {
      path: secretsPath(opts.watchNamespace),
      labelSelector: `${CLUSTER_SECRET_LABEL}=${CLUSTER_SECRET_VALUE}`,
      metadataOnly: {
        keep: (o) =>
          ({
            ...o,
            metadata: { name: o.metadata.name, namespace: o.metadata.namespace, labels: o.metadata.labels },
          }) as KubeObject,
      },
      onError: (e) => opts.log.warn({ err: errorText(e) }, 'cluster Secret watch interrupted; resuming'),
    });
    this.queue = new WorkQueue((key, signal) => this.reconcile(key, signal), { concurrency: opts.concurrency ?? 2 });
    this.sets.on((event, obj) => {
      const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
      if (event === 'delete') {
        this.queue.forget(key);
        this.revisions.forget(key);
        this.written.delete(key);
      } else this.queue.add(key);
    });
    // a cluster registered or removed, or its labels changed: every set of that namespace looks again
    this.clusterSecrets.on((_e, obj) => {
      for (const s of this.sets.inNamespace(obj.metadata.namespace ?? ''))
        this.queue.add(`${s.metadata.namespace}/${s.metadata.name}`);
    });
  }

  /** Whether the API server serves PackageSyncSets (the CRD installed): without it, rollouts stay off. */
  async served(): Promise<boolean> {
    try {
      const list = await this.opts.client.request<{ resources?: { name: string }[] }>(
        'GET',
        `/apis/${GROUP}/${VERSION}`,
      );
      return (list.resources ?? []).some((r) => r.name === SET_PLURAL);
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  start(): void {
    this.sets.start();
    this.clusterSecrets.start();
  }

  async stop(graceMs = 0): Promise<void> {
    this.sets.stop();
    this.clusterSecrets.stop();
    await this.queue.shutdown(graceMs);
  }

  /** Every PackageSync watch event: a child's change wakes its set. */
  onPackageSync(_event: InformerEvent, obj: KubeObject): void {
    if (!obj.metadata.labels?.[SET_LABEL]) return;
    const owner = (
      obj.metadata as { ownerReferences?: { kind: string; name: string; controller?: boolean }[] }
    ).ownerReferences?.find((o) => o.kind === 'PackageSyncSet' && o.controller);
    if (owner) this.queue.add(`${obj.metadata.namespace}/${owner.name}`);
  }

  private async reconcile(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number; failed: boolean }> {
    // No step before every watch it reads has listed once: a step on a cache still empty after a restart would
    // see no cluster Secrets (every target gone: children deleted, pins restarted) or no children (a healthy wave
    // read as progressing: its bake restarted). e2e/rollout's SIGKILL during bake caught the first.
    await Promise.all([this.sets.synced, this.clusterSecrets.synced, this.opts.packageSyncsSynced]);
    const [namespace, name] = key.split('/') as [string, string];
    const set = this.sets.get(namespace, name) as unknown as PackageSyncSet | undefined;
    if (!set?.metadata.uid) return { failed: false };
    const log = this.opts.log.child({ packageSyncSet: key });
    const generation = set.metadata.generation ?? 0;
    const parsed = readSetSpec(set.spec);
    const now = Date.now();
    if (!parsed.ok) {
      const conditions = invalidSpecConditions(set.status?.conditions, generation, parsed.message, now);
      const status = { ...(set.status ?? {}), observedGeneration: generation, conditions };
      // statusWrite alone decides whether a status changed (key order aside); this one is never progress only
      if (statusWrite(set.status, status, undefined, now, 0) === 'unchanged') return { failed: false };
      return { failed: false, ...((await this.writeStatus(set, status)) ? {} : { requeueAfterMs: 1_000 }) };
    }
    const spec = parsed.spec;

    // the template's interval paces how often its ref is resolved again (at least every minute), not each pass
    const resync = Math.min(durationMs(spec.template.spec.interval), RESYNC_MS);
    const { revision, revisionError } = await this.revisions.get(
      key,
      `${generation}\n${set.metadata.annotations?.[RECONCILE_REQUESTED_AT] ?? ''}`,
      now,
      resync,
      () => resolveSetRevision(spec.template.spec.source as Spec['source'], namespace, this.opts, signal),
    );

    // The registered clusters, from the watch cache. But a new rollout freezes its waves into status, and a target
    // gone from the cache leaves status and loses its child: those are decided on a consistent read. The cache may
    // not have seen yet a Secret created just before the set (two watches, no order between them), and a cluster a
    // plan misses waits for the next revision (ADR 0042).
    const targetsOf = (secrets: ClusterSecret[]) =>
      generateTargets({ name, namespace }, secrets, spec.generators.clusters.selector, spec.generators.directories);
    let targets = targetsOf(
      this.clusterSecrets.inNamespace(namespace).map((s) => ({
        name: s.metadata.name,
        namespace: s.metadata.namespace ?? '',
        labels: s.metadata.labels ?? {},
      })),
    );
    const starting = revision !== undefined && !sameRevision(revision, set.status?.revision);
    if (starting || !sameTargets(targets, set.status?.targets)) {
      try {
        targets = targetsOf(await listClusterSecrets(this.opts.client, namespace, signal));
      } catch (e) {
        log.warn({ err: errorText(e) }, 'could not list the registered clusters; trying again');
        return { failed: true, requeueAfterMs: 1_000 };
      }
    }

    const uid = set.metadata.uid;
    const children = new Map<string, ChildObservation>();
    for (const t of targets) {
      const child = this.opts.packageSyncs.get(`${namespace}/${t.child}`) as unknown as PackageSync | undefined;
      if (child) children.set(t.name, ownedBy(child as never, uid) ? observationOf(child) : { conflict: true });
    }
    const gateResults = new Map<string, GateResult>();
    for (const g of gatesToCheck(spec.rollout, set.status))
      gateResults.set(
        g.key,
        await checkGate(g, {
          client: this.opts.client,
          set,
          readSecret: this.opts.readSecret,
          allowHttp: this.opts.allowHttp ?? false,
          signal,
          ...gateServiceAccount(spec.template.spec.serviceAccountName ?? this.opts.defaultServiceAccount),
        }),
      );

    const approval = parseApproval(set.metadata.annotations?.[APPROVE_ANNOTATION]);
    const resume = parseResume(set.metadata.annotations?.[RESUME_ANNOTATION]);
    const step = stepRollout({
      rollout: spec.rollout,
      status: set.status,
      generation,
      targets,
      children,
      ...(revision ? { revision } : {}),
      ...(revisionError ? { revisionError } : {}),
      ...(approval ? { approval } : {}),
      ...(resume ? { resume } : {}),
      gateResults,
      now,
    });
    // status first: the pins it records are what the children are made to match, now or after a crash; a change
    // of progress only waits for PROGRESS_WRITE_MS since the last write (the pass it schedules writes it)
    const write = statusWrite(set.status, step.status, this.written.get(key), now, PROGRESS_WRITE_MS);
    if (write === 'now') {
      if (!(await this.writeStatus(set, step.status))) return { failed: false, requeueAfterMs: 1_000 };
      this.written.set(key, Date.now());
    }

    const ref = setRef(set);
    let failed = false;
    // a wave's children are applied a few at a time, not one after another: the wave starts when they exist
    const applies = new PQueue({ concurrency: CHILD_APPLIES_AT_ONCE });
    const applyChild = async (t: (typeof targets)[number]): Promise<void> => {
      const pin = step.pins.get(t.name);
      if (pin === undefined) return;
      const desired = childObject(ref, spec.template, t, pin);
      const digest = createHash('sha256').update(JSON.stringify(desired)).digest('hex').slice(0, 16);
      desired.metadata.annotations = { ...desired.metadata.annotations, [CHILD_DIGEST]: digest };
      const existing = this.opts.packageSyncs.get(`${namespace}/${t.child}`);
      if (existing && !ownedBy(existing as never, uid)) {
        log.warn({ child: t.child, target: t.name }, 'a PackageSync of that name is not this set’s: left alone');
        return;
      }
      if (existing?.metadata.annotations?.[CHILD_DIGEST] === digest) return;
      try {
        await this.opts.client.request(
          'PATCH',
          `${packageSyncCollectionPath(namespace)}/${encodeURIComponent(t.child)}`,
          {
            query: { fieldManager: FIELD_MANAGER, force: true },
            contentType: 'application/apply-patch+yaml',
            body: desired,
            signal,
          },
        );
      } catch (e) {
        failed = true;
        log.warn({ child: t.child, err: errorText(e) }, 'could not apply child PackageSync');
      }
    };
    await Promise.all(targets.map((t) => applies.add(() => applyChild(t))));
    // children of targets gone (or not pinned any more): deleted; their deletionPolicy decides their objects
    const wanted = new Set(targets.filter((t) => step.pins.has(t.name)).map((t) => t.child));
    for (const obj of this.opts.packageSyncs.values()) {
      if (obj.metadata.namespace !== namespace || obj.metadata.labels?.[SET_LABEL] !== setLabelValue(name)) continue;
      if (!ownedBy(obj as never, uid) || wanted.has(obj.metadata.name)) continue;
      log.info(
        { child: obj.metadata.name, target: obj.metadata.annotations?.[TARGET_ANNOTATION] },
        'deleting child of a target that left the set',
      );
      try {
        await this.opts.client.request(
          'DELETE',
          `${packageSyncCollectionPath(namespace)}/${encodeURIComponent(obj.metadata.name)}`,
          { signal },
        );
      } catch (e) {
        if (!isNotFound(e)) failed = true;
      }
    }
    const wake = Math.min(step.requeueAfterMs ?? resync, resync);
    log.debug(
      {
        phase: step.status.phase,
        revision: step.status.revision,
        targets: targets.length,
        write,
        ms: Date.now() - now,
      },
      'PackageSyncSet pass',
    );
    return { failed, requeueAfterMs: typeof write === 'object' ? Math.min(write.dueAt - now, wake) : wake };
  }

  /**
   * An update of the status subresource guarded by resourceVersion: a stale copy never overwrites progress. Called
   * only with a status that differs from the stored one (statusWrite decides): false on a conflict.
   */
  private async writeStatus(set: PackageSyncSet, status: SetStatus): Promise<boolean> {
    try {
      await this.opts.client.request(
        'PUT',
        `${setCollectionPath(set.metadata.namespace)}/${encodeURIComponent(set.metadata.name)}/status`,
        { body: { ...set, status } },
      );
      return true;
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return false;
      throw e;
    }
  }
}
