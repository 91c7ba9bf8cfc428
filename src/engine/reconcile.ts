/**
 * One reconcile of one PackageSync, top to bottom:
 *
 *   0. a periodic check of a package last found settled, whose PackageSync (resourceVersion), Inputs (by
 *      digest) and live objects are as they were, stops before loading anything (unchanged-check.ts)
 *   1. load, finalizer / deletion, spec, suspend, dependsOn
 *   2. inputs   everything the run reads, with one digest (inputs.ts): the source (resolve the ref, fetch,
 *               cached per URL and commit; verify), the revision it reports, postBuild variables, Helm's
 *               valuesFrom and capabilities
 *   3. render   a periodic check that finds nothing changed since the package was last found settled stops
 *               here (settled-checkpoints.ts: keyed by the Inputs digest); read the package's files, build
 *               (plain files | kustomize | helm template; the render cache is keyed by the Inputs digest)
 *               → objects (pure after the build), namespace policy
 *   4. plan     desired × inventory × live (reads here, decisions in core/plan: the dependency graph);
 *               nothing to do → done
 *   5. act      save inventory old ∪ new → apply the graph, best effort → prune in reverse graph order
 *               → save inventory new
 *   6. health   wait until every applied object is Current; the worker goes to the next package meanwhile
 *   7. status   Ready=True
 *
 * Each step returns a Result; the first failure ends the reconcile with nothing further applied and nothing
 * pruned (the inventory saved before applying still lists every object that might exist). The run context
 * (run.ts) is the only status writer; only src/core/status.ts turns outcomes into conditions.
 */
import { durationMs, FINALIZER, type PackageSync } from '../api/packagesync.ts';
import { Reason } from '../api/reasons.ts';
import { ok, type Failure, type Result } from '../core/failure.ts';
import { withSourceFile } from '../core/render/locate.ts';
import { gitUrlsOf } from '../core/source-address.ts';
import { compileHealthChecks, healthOf } from '../core/health/index.ts';
import { refKey, refOf } from '../core/object.ts';
import { checkNamespacePolicy, type NamespacePolicy } from '../core/plan/namespace-policy.ts';
import { isSettled } from '../core/plan/settled.ts';
import { checkSameNamespaceRefs, parseSpec } from '../core/spec.ts';
import { applyAndPrune } from './act.ts';
import { finalize } from './finalize.ts';
import { awaitHealth } from './health-step.ts';
import { planForPackage } from './package-plan.ts';
import { renderStep } from './render-step.ts';
import { NO_TRACE, type FetchedSource, type Ports, type ReconcileTrace } from './ports.ts';
import { Run, type ReconcileResult } from './run.ts';
import { Deadline } from './deadline.ts';
import { targetCluster } from './target-cluster.ts';
import { readInputs } from './inputs.ts';
import { dependenciesReady } from './package-dependencies.ts';
import { mayUseCheckpoint, rememberSettled, unchangedSinceSettled } from './settled-checkpoints.ts';
import { settledFacts, unchangedBeforeLoading } from './unchanged-check.ts';
import { InventoryUnreadableError } from '../adapters/kube/inventory-shards.ts';

export type { ReconcileResult } from './run.ts';

/** The controller's settings: the same for every reconcile (its flags). */
export interface ControllerSettings {
  /** Concurrent apply requests. */
  applyConcurrency: number;
  /** A ServiceAccount forced on PackageSyncs that name none (multi-tenancy). */
  defaultServiceAccount?: string;
  /** Where a PackageSync may place objects (see core/plan/namespace-policy.ts). */
  namespacePolicy: NamespacePolicy;
  /** postBuild: an undefined variable without a default fails the render (default true, as Flux 2.9). */
  strictSubstitutions?: boolean;
  /** --no-cross-namespace-refs: a dependsOn in another namespace is InvalidSpec (default: allowed). */
  noCrossNamespaceRefs?: boolean;
}

/** One reconcile's context, from the work queue. */
export interface RunContext {
  /** Shutdown or lost leadership: the run stops and writes nothing. */
  signal: AbortSignal;
  /** Fires when a newer revision of this PackageSync arrived (new generation, trigger): stop waiting. */
  superseded?: AbortSignal;
  /** Called when the reconcile only waits from then on (health): the manager may start another meanwhile. */
  onlyWaiting?: () => void;
  /** The reconcile-requested-at value the manager's watch showed last, and when it first did (its clock). */
  requestSeen?: { value: string; at: number };
}

export async function reconcile(
  namespace: string,
  name: string,
  ports: Ports,
  settings: ControllerSettings,
  context: RunContext,
): Promise<ReconcileResult> {
  // a periodic check of a package last found settled, whose PackageSync, Inputs and live objects are as they
  // were, stops before loading anything (unchanged-check.ts)
  const unchanged = await unchangedBeforeLoading(namespace, name, ports, { ...settings, signal: context.signal });
  if (unchanged) return unchanged;

  // 1. load; deletion; the finalizer before anything is applied
  const found = await loadPackageSync(namespace, name, ports, context.signal);
  if (!found || 'failed' in found) return found ?? { failed: false };
  if (found.metadata.deletionTimestamp) return finalize(new Run(found, ports, context.signal), settings);
  const ps = await ports.packageSyncs.setFinalizer(found, FINALIZER, true);
  if (!ps) return { failed: false };

  const run = new Run(ps, ports, context.signal);
  const deadline = new Deadline(context.signal);
  // a trace per reconcile that loaded its PackageSync (docs/adr/0043): one span per step below
  const trace = ports.tracing?.reconcile(namespace, name) ?? NO_TRACE;
  let failed = true;
  try {
    const result = await reconcileSpec(run, settings, context, deadline, trace);
    failed = result.failed;
    return result;
  } catch (e) {
    // An API fault mid-reconcile (e.g. the API server restarting): say so if the API lets us, then let the
    // queue retry. A shutdown (aborted signal) is not a failure of the package: leave the status to the next
    // leader.
    if (!context.signal.aborted) await run.interrupted(e).catch(() => undefined);
    throw e;
  } finally {
    trace.end({ failed });
    deadline.clear();
  }
}

async function reconcileSpec(
  run: Run,
  settings: ControllerSettings,
  context: RunContext,
  deadline: Deadline,
  trace: ReconcileTrace,
): Promise<ReconcileResult> {
  const { ports, loaded: ps } = run;
  // 1. (cont.) the spec, suspend, dependsOn; then the identity every later step acts as. A spec refused here
  // has no retryInterval to go by (core/exit.ts).
  const parsed = parseSpec(ps.spec);
  if (!parsed.ok) return run.decided({ kind: 'failed', failure: parsed.failure });
  const spec = parsed.value;
  const namespace = ps.metadata.namespace;
  const sameNamespace = settings.noCrossNamespaceRefs ? checkSameNamespaceRefs(spec, namespace) : ok(undefined);
  if (!sameNamespace.ok) return run.decided({ kind: 'failed', failure: sameNamespace.failure });
  // spec.timeout over the shutdown signal from here on, the dependsOn reads included (ADR 0032); let go when the
  // reconcile ends (deadline.ts). The one clock of spec.timeout: the health wait gets what is left of it.
  const signal = deadline.start(durationMs(spec.timeout));
  if (spec.suspend) return run.decided({ kind: 'suspended' });
  // custom health expressions compile before anything is fetched or applied: a typo is InvalidSpec, not a
  // health check that can never pass
  const healthRules = compileHealthChecks(spec.healthCheckExprs ?? []);
  if (!healthRules.ok) return run.decided({ kind: 'failed', failure: healthRules.failure });
  const interval = durationMs(spec.interval);
  run.timed({ intervalMs: interval, retryMs: durationMs(spec.retryInterval) });

  const ready = await dependenciesReady(ps, spec, ports);
  if (!ready.ok && ready.failure.reason === Reason.DependencyCycle) return run.failed(ready.failure);
  if (!ready.ok) return run.decided({ kind: 'dependency-not-ready', message: ready.failure.message });
  // the cluster to act in (spec.kubeConfig: a remote one, reachable now) and the identity, bound once
  const cluster = await targetCluster(namespace, spec, ports, signal);
  if (!cluster.ok) return run.failed(cluster.failure);
  const serviceAccount = spec.serviceAccountName ?? settings.defaultServiceAccount;
  const bound = run.actAs(serviceAccount, cluster.value);
  const inventory = ps.status?.inventory?.entries ?? [];

  // 2. inputs: everything the run reads (the source fetched, its files left for later, and verified; the postBuild
  // variables; Helm's valuesFrom and capabilities), with one digest that keys every shortcut (engine/inputs.ts).
  // A requested reconcile means "as of when it was asked": what was learnt of the ref before then is not enough, a
  // resolve started since is (a fleet requested at once shares one ls-remote). "When" is when the watch showed the
  // request, by this controller's clock; unknown (the CLI): now.
  if (run.trigger) {
    const seen = context.requestSeen?.value === run.trigger ? context.requestSeen.at : undefined;
    for (const url of gitUrlsOf(spec.source)) ports.source.forget?.(url, seen);
  }
  const read = await trace.step('fetch', () =>
    readInputs({
      ps,
      spec,
      objects: bound.objects,
      ports,
      serviceAccount,
      strictSubstitutions: settings.strictSubstitutions ?? true,
      signal,
      resolved: (revision) => bound.resolved(revision),
    }),
  );
  if (!read.ok) return run.failed(read.failure);
  const inputs = read.value;
  const { revision } = inputs;
  trace.set({ 'packagesync.revision': revision });
  // the run the Inputs step told its revision: its outcomes from here on name it
  const resolved = bound.resolved(revision);

  // 3. render. A periodic check that finds nothing changed since the last one found the package settled stops
  // here: the same Inputs digest, inventory and live copies (engine/settled-checkpoints.ts, ADR 0031, ADR 0037)
  const checkpoint = { ps, inputs, inventory };
  const memory = ports.checkpoints;
  const useCheckpoint = mayUseCheckpoint(memory, bound.objects, run.trigger, checkpoint);
  if (useCheckpoint && (await unchangedSinceSettled(memory, bound.objects, checkpoint))) {
    ports.observe?.unchangedCheck?.('before-render');
    run.log.debug('nothing changed since the last settled check: render and plan skipped');
    return run.settled();
  }
  // the render span covers reading the package's files too: a missing path fails there (PathNotFound)
  const built = await trace.step('render', async () => {
    const files = await readFiles(inputs.fetched);
    if (!files.ok) return files;
    const r = await renderStep(ports, {
      source: files.value,
      spec,
      owner: run.owner,
      objects: bound.objects,
      substitution: inputs.substitution,
      ...(inputs.helm ? { helm: inputs.helm } : {}),
      inputsDigest: inputs.digest,
      signal,
    });
    return r.ok ? ok({ source: files.value, rendered: r }) : r;
  });
  if (!built.ok) return run.failed(built.failure);
  const { source, rendered } = built.value;
  run.digest = rendered.value.digest;
  // keys kustomize or Helm wrote twice: the last value is applied, as helm install and Flux do (docs/adr/0034)
  await run.duplicateKeysSeen(rendered.value.duplicateKeys);
  const desired = rendered.value.objects;
  // later failures about an object name where it is defined: file:line for a plain file, the file for a built
  // package (whose object may have a generated name found in no file)
  const located = (f: Failure) => withSourceFile(f, rendered.value.sources);
  const allowed = checkNamespacePolicy(desired, ps.metadata.namespace, settings.namespacePolicy);
  if (!allowed.ok) return run.failed(located(allowed.failure));

  // 4. plan: the same planning as `packagesync plan` (package-plan.ts), prune budget included
  const planned = await trace.step('plan', () =>
    planForPackage(bound.objects, ps, spec, rendered.value, revision, signal),
  );
  if (!planned.ok) return run.failed(located(planned.failure));
  const { live, plan, budget } = planned.value;
  // objects annotated apply Ignore are not ours to judge (core/plan/object-policy.ts)
  let managed = desired.filter((d) => !plan.ignored.has(refKey(refOf(d))));
  if (!budget.ok) return run.failed(budget.failure);
  const liveHealth = healthOf(
    managed.flatMap((d) => live.byKey.get(refKey(refOf(d))) ?? []),
    healthRules.value,
  );
  const settled = isSettled({
    plan,
    prune: spec.prune,
    wait: spec.wait,
    revision,
    status: ps.status,
    generation: ps.metadata.generation,
    inventory,
    health: liveHealth,
  });
  // drift as data (engine/drift-step.ts): Detect reports it and writes nothing to the objects
  const driftNews = await run.driftSeen(plan.drifted, spec.driftPolicy);
  if (settled && !run.trigger) {
    if (useCheckpoint && plan.drifted.length === 0) {
      const actsAsController = bound.objects.liveCache === ports.objects.liveCache;
      const seen = {
        actsAsController,
        inputs: inputs.digest,
        source: { commit: inputs.fetched.commit, content: inputs.content, revision, tool: inputs.tool },
        inventory,
        live: live.byKey,
      };
      rememberSettled(memory, checkpoint, live.byKey, await settledFacts(ps, spec, seen, interval, ports));
    }
    return driftNews ? resolved.driftReported() : run.settled();
  }
  memory?.forget(ps.metadata.namespace, ps.metadata.name);

  // 5. act: old ∪ new saved first, so a crash at any instant leaves no object unknown to the inventory;
  // apply over the graph, best effort; prune only after a fully successful apply (engine/act.ts)
  const acted = await trace.step('apply', () =>
    applyAndPrune(
      bound.objects,
      plan,
      live.byKey,
      {
        prune: spec.prune,
        force: spec.force,
        signal,
        concurrency: settings.applyConcurrency,
        sources: rendered.value.sources,
        healthRules: healthRules.value,
      },
      resolved,
    ),
  );
  run.announceChanges();
  if (!acted.ok) return run.failed(located(acted.failure));
  await run.driftCorrected(plan.drifted, acted.value.takenBack);
  await run.released(spec.prune ? plan.released : []);

  // 6. health: Ready only when every applied object is Current (health-step.ts); an object first read when its
  // create-only apply was refused (docs/adr/0029) may say apply Ignore only now
  const known = new Map([...live.byKey, ...acted.value.stored]);
  if (acted.value.ignored.size > 0) managed = managed.filter((d) => !acted.value.ignored.has(refKey(refOf(d))));
  run.observed(
    healthOf(
      managed.flatMap((d) => known.get(refKey(refOf(d))) ?? []),
      healthRules.value,
    ),
    [],
  );
  if (spec.wait && managed.length > 0) {
    // from here on this reconcile waits for the cluster: its worker may take the next package (ADR 0030)
    context.onlyWaiting?.();
    const healthy = await trace.step('health wait', () =>
      awaitHealth({
        ports,
        spec,
        objects: bound.objects,
        desired: managed,
        known,
        revision,
        pathRevision: source.pathRevision,
        credentials: inputs.credentials,
        timeoutMs: deadline.remainingMs(),
        signal: context.signal,
        superseded: context.superseded,
        interval,
        waitingMessage: `Applied revision ${revision}: ${run.summary()}; waiting for health`,
        progress: resolved,
        rules: healthRules.value,
      }),
    );
    if (!healthy.ok && healthy.failure.reason === Reason.Superseded) {
      // a new generation, the trigger annotation or shutdown: the manager's to re-run; a new commit: at once
      return run.superseded(context.signal.aborted || (context.superseded?.aborted ?? false));
    }
    if (!healthy.ok) return run.failed(located(healthy.failure));
  }

  // 7. status
  return resolved.succeeded(`Applied revision ${revision}: ${run.summary()}`);
}

/** The fetched source with its files, read now when the fetch left them for later. */
async function readFiles(fetched: FetchedSource): Promise<Result<FetchedSource>> {
  if (!fetched.readFiles) return ok(fetched);
  const files = await fetched.readFiles();
  return files.ok ? ok({ ...fetched, files: files.value }) : files;
}

/**
 * The PackageSync with its whole inventory. One whose inventory shards cannot be read (ADR 0027) fails
 * InventoryUnreadable: nothing is applied or pruned, and the status write leaves status.inventory as it is.
 */
async function loadPackageSync(
  namespace: string,
  name: string,
  ports: Ports,
  signal: AbortSignal,
): Promise<PackageSync | ReconcileResult | undefined> {
  try {
    return await ports.packageSyncs.get(namespace, name);
  } catch (e) {
    if (!(e instanceof InventoryUnreadableError)) throw e;
    const { inventory: _unreadable, ...status } = e.packageSync.status ?? {};
    const run = new Run({ ...e.packageSync, status }, ports, signal);
    const spec = parseSpec(e.packageSync.spec);
    if (spec.ok) {
      run.timed({ intervalMs: durationMs(spec.value.interval), retryMs: durationMs(spec.value.retryInterval) });
    }
    return run.failed(e.failure);
  }
}
