/**
 * One reconcile of one PackageSync, top to bottom:
 *
 *   load → finalizer / deletion → suspend → spec → dependsOn → source → render → plan
 *        → save inventory old∪new → apply waves → prune → save inventory new → wait for health → status
 *
 * Each step returns a value or a Failure; the first Failure ends the reconcile with nothing further
 * applied and nothing pruned (the inventory saved before applying still lists every object that might
 * exist). Only src/core/status.ts turns outcomes into conditions.
 */
import {
  durationMs,
  FINALIZER,
  parseSpec,
  RECONCILE_REQUESTED_AT,
  type HistoryEntry,
  type InventoryEntry,
  type PackageSync,
  type Spec,
  type Status,
} from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import type { Logger } from 'pino';
import type { Failure } from '../core/failure.ts';
import { groupOf, refKey, refOf, type KubeObject } from '../core/object.ts';
import { planChanges } from '../core/plan/plan-changes.ts';
import { planPrune } from '../core/plan/prune.ts';
import { checkNamespacePolicy, type NamespacePolicy } from '../core/plan/namespace-policy.ts';
import { summarizeChanges, type Change } from '../core/plan/changeset.ts';
import { renderPackage } from '../core/render/index.ts';
import type { HealthSummary } from '../core/health/index.ts';
import { isReadyFor, reduceStatus, sameStatus, type Outcome } from '../core/status.ts';
import { applyAndPrune } from './act.ts';
import { interruptionMessage } from '../adapters/kube/failures.ts';
import { readLiveState } from './live.ts';
import type { Ports } from './ports.ts';
import { pruneObjects } from './prune.ts';
import { awaitHealth } from './health-step.ts';
import { readSubstitution } from './substitution-inputs.ts';
import { healthOf } from './wait.ts';

export interface ReconcileOptions {
  signal: AbortSignal;
  /** Concurrent applies inside a wave. */
  applyConcurrency: number;
  /** A ServiceAccount forced on PackageSyncs that name none (multi-tenancy). */
  defaultServiceAccount?: string;
  /** Where a PackageSync may place objects (see core/plan/namespace-policy.ts). */
  namespacePolicy: NamespacePolicy;
  /** Fires when a newer revision of this PackageSync arrived (new generation, trigger): stop waiting. */
  superseded?: AbortSignal;
  /** postBuild: an undefined variable without a default fails the render (default true, as Flux 2.9). */
  strictSubstitutions?: boolean;
}

export interface ReconcileResult {
  /** When to run again; undefined = only on the next change (deleted, suspended). */
  requeueAfterMs?: number;
  /** True when the reconcile failed: the controller backs off from retryInterval. */
  failed: boolean;
}

export async function reconcile(
  namespace: string,
  name: string,
  ports: Ports,
  opts: ReconcileOptions,
): Promise<ReconcileResult> {
  let ps = await ports.packageSyncs.get(namespace, name);
  if (!ps) return { failed: false };
  if (ps.metadata.deletionTimestamp) return finalize(ps, ports, opts);
  const withFinalizer = await ports.packageSyncs.setFinalizer(ps, FINALIZER, true);
  if (!withFinalizer) return { failed: false };
  ps = withFinalizer;

  const parsed = parseSpec(ps.spec);
  if (!parsed.ok) {
    return finish(
      ps,
      ports,
      { kind: 'failed', failure: { reason: Reason.InvalidSpec, message: parsed.message, terminal: true } },
      ps.metadata.annotations?.[RECONCILE_REQUESTED_AT],
      60_000,
    );
  }
  const spec = parsed.spec;
  if (spec.suspend) return { failed: false };
  const retry = durationMs(spec.retryInterval);
  const interval = durationMs(spec.interval);

  const blocker = await dependencyNotReady(ps, spec, ports);
  if (blocker) {
    const outcome = { kind: 'dependency-not-ready', message: blocker } as const;
    return finish(ps, ports, outcome, ps.metadata.annotations?.[RECONCILE_REQUESTED_AT], retry, false);
  }

  const run = new Run(ps, spec, ports, opts);
  try {
    return await run.execute(interval, retry);
  } catch (e) {
    // An API fault mid-reconcile (e.g. the API server restarting): say so if the API lets us, keeping the
    // inventory as it was saved last (old ∪ new once applying started), then let the queue retry.
    // A shutdown (aborted signal) is not a failure of the package: leave the status to the next leader.
    if (!opts.signal.aborted) await run.failUnexpectedly(e).catch(() => undefined);
    throw e;
  }
}

class Run {
  readonly ps: PackageSync;
  readonly spec: Spec;
  readonly ports: Ports;
  readonly opts: ReconcileOptions;
  readonly owner: { name: string; namespace: string };
  readonly impersonate: string | undefined;
  readonly started = new Date();
  status: Status;
  /** The PackageSync as last read or written: its resourceVersion guards the next status write. */
  latest: PackageSync;
  /** The reconcile's child logger; the revision is bound once the source resolved it. */
  log: Logger;

  constructor(ps: PackageSync, spec: Spec, ports: Ports, opts: ReconcileOptions) {
    this.ps = ps;
    this.spec = spec;
    this.ports = ports;
    this.opts = opts;
    this.owner = { name: ps.metadata.name, namespace: ps.metadata.namespace };
    const sa = spec.serviceAccountName ?? opts.defaultServiceAccount;
    this.impersonate = sa ? `system:serviceaccount:${ps.metadata.namespace}:${sa}` : undefined;
    this.status = ps.status ?? {};
    this.latest = ps;
    this.log = ports.log;
  }

  async execute(interval: number, retry: number): Promise<ReconcileResult> {
    const { ps, spec, ports } = this;
    const signal = AbortSignal.any([this.opts.signal, AbortSignal.timeout(durationMs(spec.timeout))]);
    const inventory = ps.status?.inventory?.entries ?? [];
    const trigger = ps.metadata.annotations?.[RECONCILE_REQUESTED_AT];
    const triggered = trigger !== undefined && trigger !== ps.status?.lastHandledReconcileAt;
    if (triggered) this.status = { ...this.status, lastHandledReconcileAt: trigger };

    // 2. source: resolve the ref, fetch (cached per URL and commit), read the package's files
    // A requested reconcile means "now": whatever was learnt about the ref a moment ago is not enough.
    if (triggered) ports.source.forget?.(spec.source.url);
    const credentials = await this.readCredentials();
    if ('reason' in credentials) return this.fail(credentials, undefined, retry);
    const source = await ports.source.fetch(spec.source, credentials.data, signal);
    if (!source.ok) return this.fail(source.failure, undefined, retry);
    const { revision } = source.value;
    this.log = this.log.child({ revision });

    // 3. render: files → objects (pure), postBuild variables read first (engine/substitution-inputs.ts). Scope
    // comes from discovery: a kind it does not know (a CRD installed since it was loaded) gets one refresh and a
    // second render.
    const substitution = await readSubstitution(
      ps.metadata.namespace,
      spec.postBuild,
      ports,
      this.opts.strictSubstitutions ?? true,
    );
    if (!substitution.ok) return this.fail(substitution.failure, revision, retry);
    const discovery = ports.objects.discovery;
    const render = () =>
      renderPackage(source.value.files, {
        owner: this.owner,
        defaultNamespace: ps.metadata.namespace,
        targetNamespace: spec.targetNamespace,
        isNamespaced: (g, k) => discovery.isNamespaced(g, k),
        allowEmpty: spec.allowEmpty,
        substitution: substitution.value,
      });
    let rendered = render();
    const unknownKind = (o: KubeObject) => discovery.isNamespaced(groupOf(o.apiVersion), o.kind) === undefined;
    if (rendered.ok && rendered.value.objects.some(unknownKind)) {
      await discovery.refresh();
      rendered = render();
    }
    if (!rendered.ok) return this.fail(rendered.failure, revision, retry);
    const desired = rendered.value.objects;
    const outside = checkNamespacePolicy(desired, ps.metadata.namespace, this.opts.namespacePolicy);
    if (outside) return this.fail(outside, revision, retry);

    // 4. plan: desired × inventory × live (reads here, decisions in core/plan)
    const live = await readLiveState(ports.objects, desired, inventory, this.owner, {
      impersonate: this.impersonate,
      signal,
    });
    if (!live.ok) return this.fail(live.failure, revision, retry);
    const planned = planChanges(desired, inventory, live.value.byKey, this.owner);
    if (!planned.ok) return this.fail(planned.failure, revision, retry);
    const plan = planned.plan;
    const prune = spec.prune ? plan.prune : [];

    // Nothing to do: same revision and generation, nothing drifted, nothing to prune, all healthy.
    const desiredKeys = new Set(desired.map((d) => refKey(refOf(d))));
    const healthNow = healthOf(
      [...live.value.byKey.entries()].filter(([key]) => desiredKeys.has(key)).map(([, o]) => o),
    );
    const settled =
      plan.toApply.size === 0 &&
      prune.length === 0 &&
      ps.status?.lastAppliedRevision === revision &&
      isReadyFor(ps.status, ps.metadata.generation) &&
      (!spec.wait || healthNow.status === 'Current');
    if (settled && !triggered && sameInventory(inventory, plan.inventoryAfter))
      return { failed: false, requeueAfterMs: interval };

    // 5. act: save old ∪ new first, so a crash at any instant leaves no object unknown to the inventory;
    // apply in waves; only after a fully successful apply prune what left the package (engine/act.ts)
    const acted = await applyAndPrune(ports.objects, plan, live.value.byKey, this.owner, {
      prune: spec.prune,
      impersonate: this.impersonate,
      force: spec.force,
      signal,
      concurrency: this.opts.applyConcurrency,
      saveInventory: async (entries, phase) => {
        this.status = { ...this.status, inventory: { entries } };
        // the shrunk inventory goes out with the next status write (waiting, succeeded or failed)
        if (phase === 'applying') {
          await this.write({ kind: 'progressing', revision, message: `Applying revision ${revision}` });
        }
      },
    });
    const { changes } = acted;
    ports.observe?.applied?.(changes.filter((c) => c.action !== 'unchanged' && c.action !== 'pruned').length);
    if (acted.applyFailures.length > 0) return this.fail(acted.failure!, revision, retry);
    ports.observe?.pruned?.(acted.pruned.length);
    const summary = summarizeChanges(changes);
    if (changes.some((c) => c.action !== 'unchanged')) {
      this.log.info({ changes: summary }, 'applied');
      await ports.packageSyncs.event(ps, 'Normal', 'Applied', `Revision ${revision}: ${summary}`);
    }
    if (acted.failure) return this.fail(acted.failure, revision, retry, changes, rendered.value.digest);

    // 6. health: Ready only when every applied object is Current (see health-step.ts)
    const known = new Map([...live.value.byKey, ...acted.stored]);
    let health: HealthSummary = healthOf(desired.flatMap((d) => known.get(refKey(refOf(d))) ?? []));
    if (spec.wait && desired.length > 0) {
      const waited = await awaitHealth({
        ports,
        spec,
        owner: this.owner,
        impersonate: this.impersonate,
        desired,
        known,
        revision,
        credentials: credentials.data,
        timeoutMs: Math.max(0, durationMs(spec.timeout) - (Date.now() - this.started.getTime())),
        signal: this.opts.signal,
        superseded: this.opts.superseded,
        interval,
        waitingMessage: `Applied revision ${revision}: ${summary}; waiting for health`,
        progress: (message) => this.write({ kind: 'waiting', revision, message }),
      });
      // A newer revision makes this wait moot: no failure to record, the next run starts over.
      if (waited.kind === 'cancelled') return { failed: false, ...(waited.newRevision ? { requeueAfterMs: 0 } : {}) };
      health = waited.summary;
      if (waited.kind === 'unhealthy') {
        return this.fail(waited.failure, revision, retry, changes, rendered.value.digest, health);
      }
    }

    // 7. status: Ready=True
    this.setObjects(health);
    this.addHistory(revision, 'Succeeded', changes, rendered.value.digest);
    await this.write({ kind: 'succeeded', revision, message: `Applied revision ${revision}: ${summary}` });
    return { failed: false, requeueAfterMs: interval };
  }

  private async readCredentials(): Promise<{ data: Record<string, string> | undefined } | Failure> {
    const ref = this.spec.source.secretRef;
    if (!ref) return { data: undefined };
    const data = await this.ports.secrets.read(this.ps.metadata.namespace, ref.name);
    if (!data) {
      return {
        reason: Reason.AuthSecretNotFound,
        message: `Secret ${this.ps.metadata.namespace}/${ref.name} named in spec.source.secretRef does not exist`,
        terminal: false,
      };
    }
    return { data };
  }

  async failUnexpectedly(e: unknown): Promise<void> {
    const message = `reconcile interrupted: ${interruptionMessage(e)}; retrying`;
    await this.write({ kind: 'failed', failure: { reason: Reason.InternalError, message, terminal: false } });
  }

  private setObjects(h: HealthSummary): void {
    const c = h.counts;
    this.status = {
      ...this.status,
      objects: {
        total: h.total,
        current: c.Current,
        inProgress: c.InProgress,
        failed: c.Failed,
        terminating: c.Terminating,
        unknown: c.Unknown + c.NotFound,
      },
    };
  }

  private addHistory(revision: string, result: string, changes: Change[], digest: string): void {
    const count = (a: string) => changes.filter((c) => c.action === a).length;
    const entry: HistoryEntry = {
      revision,
      result,
      startedAt: this.started.toISOString(),
      durationSeconds: Math.round((Date.now() - this.started.getTime()) / 10) / 100,
      created: count('created'),
      configured: count('configured'),
      pruned: count('pruned'),
      digest: `sha256:${digest}`,
    };
    this.status = { ...this.status, history: [entry, ...(this.status.history ?? [])].slice(0, 5) };
  }

  private async fail(
    failure: Failure,
    revision: string | undefined,
    retry: number,
    changes: Change[] = [],
    digest = '',
    health?: HealthSummary,
  ): Promise<ReconcileResult> {
    if (health) this.setObjects(health);
    if (revision) this.addHistory(revision, failure.reason, changes, digest);
    this.log.info({ reason: failure.reason }, failure.message);
    // One Warning event per new failure, not one per retry of the same failure.
    const before = this.ps.status?.conditions?.find((c) => c.type === 'Ready');
    if (!this.opts.signal.aborted && (before?.reason !== failure.reason || before.message !== failure.message)) {
      await this.ports.packageSyncs.event(this.ps, 'Warning', failure.reason, failure.message);
    }
    await this.write({ kind: 'failed', failure, ...(revision ? { revision } : {}) });
    return { failed: true, requeueAfterMs: retry };
  }

  private async write(outcome: Outcome): Promise<void> {
    // Shutdown or lost leadership aborted this run: another replica may own the PackageSync by now, and a
    // step cut short says nothing about the package. Status stays as the last write left it (Reconciling,
    // inventory old ∪ new), which is what the next leader starts from.
    if (this.opts.signal.aborted) return;
    const next = reduceStatus(this.status, this.ps.metadata.generation ?? 0, outcome, new Date().toISOString());
    const written = await this.ports.packageSyncs.writeStatus(this.latest, next);
    // a conflict may have added another writer's inventory entries (core/status-rebase.ts): keep them
    this.status = written?.status ?? next;
    if (written) this.latest = written;
  }
}

async function finish(
  ps: PackageSync,
  ports: Ports,
  outcome: Outcome,
  /** The reconcile-requested-at annotation: answered here too, so `packagesync reconcile` sees this outcome. */
  handledAt: string | undefined,
  requeueAfterMs: number,
  failed = true,
): Promise<ReconcileResult> {
  const prev = handledAt === undefined ? ps.status : { ...ps.status, lastHandledReconcileAt: handledAt };
  const next = reduceStatus(prev, ps.metadata.generation ?? 0, outcome, new Date().toISOString());
  if (!sameStatus(ps.status, next)) await ports.packageSyncs.writeStatus(ps, next);
  return { failed, requeueAfterMs };
}

/** The first dependsOn PackageSync that is not Ready for its current generation, described. */
async function dependencyNotReady(ps: PackageSync, spec: Spec, ports: Ports): Promise<string | undefined> {
  for (const dep of spec.dependsOn ?? []) {
    const ns = dep.namespace ?? ps.metadata.namespace;
    const other = await ports.packageSyncs.get(ns, dep.name);
    if (!other) return `dependency ${ns}/${dep.name} does not exist`;
    if (!isReadyFor(other.status, other.metadata.generation)) return `dependency ${ns}/${dep.name} is not Ready`;
  }
  return undefined;
}

/** Deletion: prune the inventory when spec.prune, then release the finalizer. */
async function finalize(ps: PackageSync, ports: Ports, opts: ReconcileOptions): Promise<ReconcileResult> {
  if (!ps.metadata.finalizers?.includes(FINALIZER)) return { failed: false };
  const parsed = parseSpec(ps.spec);
  const prune = parsed.ok ? parsed.spec.prune && !parsed.spec.suspend : false;
  if (prune) {
    const owner = { name: ps.metadata.name, namespace: ps.metadata.namespace };
    const sa = parsed.ok ? (parsed.spec.serviceAccountName ?? opts.defaultServiceAccount) : undefined;
    const impersonate = sa ? `system:serviceaccount:${ps.metadata.namespace}:${sa}` : undefined;
    const inventory = ps.status?.inventory?.entries ?? [];
    const live = await readLiveState(ports.objects, [], inventory, owner, { impersonate, signal: opts.signal });
    if (!live.ok) return { failed: true, requeueAfterMs: 5_000 };
    const pruned = await pruneObjects(ports.objects, planPrune(inventory, []), live.value.byKey, owner, {
      impersonate,
      signal: opts.signal,
    });
    if (pruned.failure) {
      await ports.packageSyncs.event(ps, 'Warning', pruned.failure.reason, pruned.failure.message);
      return { failed: true, requeueAfterMs: 5_000 };
    }
    if (pruned.pruned.length)
      await ports.packageSyncs.event(ps, 'Normal', 'Pruned', `Deleted ${pruned.pruned.length} object(s)`);
  }
  await ports.packageSyncs.setFinalizer(ps, FINALIZER, false);
  return { failed: false };
}

function sameInventory(a: InventoryEntry[], b: InventoryEntry[]): boolean {
  return a.length === b.length && a.every((e, i) => e.id === b[i]!.id && e.v === b[i]!.v);
}
