/**
 * The rollout's step function: persisted status + the targets and children observed now + the clock → the next
 * status, the revision each target's child must be pinned to, and when to look again. Pure: the controller does
 * the reads before and the writes after (status first, then children), so a crash at any instant leaves a status
 * from which the same step decides the same thing again (docs/adr/0042).
 */
import type { SetSpec, SetStatus, TargetStatus, WaveStatus } from '../../api/packagesyncset.ts';
import { durationMs } from '../../api/packagesync.ts';
import { rolloutConditions } from './conditions.ts';
import { observeChild, sameRevision, type ChildObservation } from './observe.ts';
import type { Target } from './targets.ts';
import { approvalAnnotation, checkGates, parseApproval, type Approval, type GateResult } from './gates.ts';
import { resumeHeld, type Resume } from './resume.ts';
import { planWaves, resolveIntOrPercent } from './waves.ts';
import { windowBlock } from './windows.ts';

export { approvalAnnotation, parseApproval } from './gates.ts';

export type { Approval, GateResult } from './gates.ts';
export { GATE_RETRY_MS, gatesToCheck } from './gates.ts';

export interface StepInput {
  rollout: SetSpec['rollout'];
  status: SetStatus | undefined;
  generation: number;
  targets: readonly Target[];
  /** By target name. */
  children: ReadonlyMap<string, ChildObservation>;
  /** The template's ref resolved to an exact revision; undefined while it is not (see revisionError). */
  revision?: string;
  revisionError?: { reason: string; message: string };
  approval?: Approval;
  /** packagesync.io/resume, parsed: a held rollout goes on when it names the wave and revision held. */
  resume?: Resume;
  /** http, job and metric gate results by `<wave>/<gate>`, checked by the controller (gatesToCheck) just before this step. */
  gateResults?: ReadonlyMap<string, GateResult>;
  now: number;
}

export interface StepResult {
  status: SetStatus;
  /** target name → the revision its child is pinned to; a target absent here has no child (yet). */
  pins: Map<string, string>;
  /** Look again after this long even if nothing changes (bake end, a progress deadline, a gate retry). */
  requeueAfterMs?: number;
}

export const NO_TARGETS =
  'no target: no kubeconfig Secret labelled packagesync.io/secret-type=cluster in the set’s own namespace matches ' +
  'spec.generators.clusters.selector; a set targets only clusters registered in its own namespace';
const FAILURE_LIST = 10;

const iso = (ms: number) => new Date(ms).toISOString();
const ms = (s: string | undefined) => (s === undefined ? undefined : Date.parse(s));

/** packagesync.io/resume: the same form as an approval, naming the held wave and revision. */
export function parseResume(value: string | undefined): Resume | undefined {
  const a = parseApproval(value);
  return a && { ...a, value: value!.trim() };
}

class Step {
  readonly targets = new Map<string, TargetStatus>();
  readonly waves: WaveStatus[];
  status: SetStatus;
  wakeAt: number[] = [];
  /** Said before whatever blocks: the rollout this one superseded. */
  note = '';

  readonly input: StepInput;

  constructor(input: StepInput) {
    this.input = input;
    const prev = input.status ?? {};
    this.status = { ...prev };
    this.waves = (prev.waves ?? []).map((w) => ({ ...w }));
    const previous = new Map((prev.targets ?? []).map((t) => [t.name, t]));
    // targets the generator no longer yields leave status (their children are deleted: no pin)
    for (const t of input.targets) {
      const old = previous.get(t.name);
      this.targets.set(t.name, {
        name: t.name,
        cluster: t.cluster,
        ...(t.directory !== undefined ? { directory: t.directory } : {}),
        child: t.child,
        health: 'Pending',
        ...(old?.wave !== undefined ? { wave: old.wave } : {}),
        ...(old?.revision !== undefined ? { revision: old.revision } : {}),
        ...(old?.startedAt !== undefined ? { startedAt: old.startedAt } : {}),
      });
    }
  }

  pin(t: TargetStatus, revision: string) {
    if (t.revision === revision) return;
    t.revision = revision;
    t.startedAt = iso(this.input.now);
  }

  observe(t: TargetStatus, deadlineMs: number) {
    const o = observeChild(t.revision, this.input.children.get(t.name), ms(t.startedAt), deadlineMs, this.input.now);
    t.health = o.health;
    if (o.reason) t.reason = o.reason;
    else delete t.reason;
    if (o.message && o.health !== 'Healthy') t.message = o.message.slice(0, 512);
    else delete t.message;
    if (o.health === 'Progressing' && t.startedAt) this.wakeAt.push(Date.parse(t.startedAt) + deadlineMs + 1);
  }

  startRollout(revision: string) {
    const superseded =
      this.status.revision && ['Progressing', 'Baking', 'Gating'].includes(this.status.phase ?? '')
        ? this.status.revision
        : undefined;
    const { plan } = planWaves(this.input.targets, this.input.rollout.waves);
    this.waves.length = 0;
    for (const w of plan)
      this.waves.push({ name: w.name, phase: 'Pending', size: w.targets.length, healthy: 0, failed: 0, budget: 0 });
    for (const t of this.targets.values()) delete t.wave;
    for (const w of plan) for (const n of w.targets) this.targets.get(n)!.wave = w.name;
    this.status.revision = revision;
    this.status.phase = 'Progressing';
    this.status.startedAt = iso(this.input.now);
    delete this.status.completedAt;
    delete this.status.blockedBy;
    this.status.message = `rolling out ${revision}`;
    if (superseded) this.note = `${revision} supersedes ${superseded}; `;
  }

  waveTargets(name: string): TargetStatus[] {
    return [...this.targets.values()].filter((t) => t.wave === name);
  }

  /** Drives the first wave not yet Succeeded; returns false when the rollout stops there (blocked or failed). */
  driveWave(i: number): 'next' | 'wait' | 'failed' {
    const spec = this.input.rollout.waves.find((w) => w.name === this.waves[i]!.name)!;
    const wave = this.waves[i]!;
    const revision = this.status.revision!;
    const now = this.input.now;
    const members = this.waveTargets(wave.name);
    const deadline = durationMs(spec.progressDeadline);
    wave.size = members.length;
    wave.budget = resolveIntOrPercent(spec.failureBudget, members.length, 'down', 0);
    // a window closed (or a freeze in force): no wave starts and no further target of this one is updated
    const closed = windowBlock(this.input.rollout.windows, now);
    if (closed?.opensAt !== undefined) this.wakeAt.push(closed.opensAt);
    if (closed && wave.phase === 'Pending') {
      this.block(wave.name, closed.window, closed.reason, `wave ${wave.name} not started: ${closed.message}`);
      return 'wait';
    }
    if (wave.phase === 'Pending') {
      wave.phase = 'Progressing';
      wave.startedAt = iso(now);
    }
    const parallel = Math.max(1, resolveIntOrPercent(spec.maxParallel, members.length, 'up', members.length));
    // observe what was started, then start more while slots are free: settled targets (healthy, failed,
    // unreachable) hold no slot
    const started = members.filter((t) => sameRevision(t.revision, revision));
    for (const t of started) this.observe(t, deadline);
    let inFlight = started.filter((t) => t.health === 'Progressing').length;
    for (const t of members) {
      if (inFlight >= parallel || closed) break;
      if (sameRevision(t.revision, revision)) continue;
      this.pin(t, revision);
      this.observe(t, deadline);
      inFlight++;
    }
    // not started yet: their old revision has no deadline in this rollout
    for (const t of members) if (!sameRevision(t.revision, revision)) this.observe(t, Number.POSITIVE_INFINITY);
    const bad = members.filter(
      (t) => sameRevision(t.revision, revision) && (t.health === 'Failed' || t.health === 'Unreachable'),
    );
    wave.failed = bad.length;
    wave.healthy = members.filter((t) => sameRevision(t.revision, revision) && t.health === 'Healthy').length;
    if (bad.length > wave.budget) {
      wave.phase = 'Failed';
      const named = bad
        .slice(0, FAILURE_LIST)
        .map((t) => `${t.name} (${t.health === 'Unreachable' ? 'unreachable' : (t.reason ?? 'failed')})`)
        .join(', ');
      this.fail(
        wave.name,
        'FailureBudgetExceeded',
        `wave ${wave.name}: ${bad.length} of ${members.length} targets failed or unreachable, budget ${wave.budget}: ${named}${bad.length > FAILURE_LIST ? ', …' : ''}`,
      );
      return 'failed';
    }
    const settled = wave.healthy + wave.failed === members.length;
    if (!settled) {
      // a regression during bake or gates restarts the bake clock when it is healthy again
      delete wave.healthyAt;
      wave.phase = 'Progressing';
      if (closed && members.some((t) => !sameRevision(t.revision, revision))) {
        this.block(wave.name, closed.window, closed.reason, `wave ${wave.name} paused: ${closed.message}`);
        return 'wait';
      }
      this.block(
        wave.name,
        'health',
        'WaveProgressing',
        `wave ${wave.name}: ${wave.healthy} of ${members.length} healthy on ${revision}`,
      );
      return 'wait';
    }
    wave.healthyAt ??= iso(now);
    const bakeEnd = Date.parse(wave.healthyAt) + durationMs(spec.bakeTime);
    if (now < bakeEnd) {
      wave.phase = 'Baking';
      this.wakeAt.push(bakeEnd);
      this.block(
        wave.name,
        'bake',
        'Baking',
        `wave ${wave.name} healthy since ${wave.healthyAt}; baking until ${iso(bakeEnd)}`,
      );
      return 'wait';
    }
    wave.phase = 'Gating';
    const gates = checkGates(
      {
        now,
        ...(this.input.approval ? { approval: this.input.approval } : {}),
        ...(this.input.gateResults ? { gateResults: this.input.gateResults } : {}),
        block: (...a) => this.block(...a),
        fail: (...a) => this.fail(...a),
        wake: (at) => this.wakeAt.push(at),
      },
      spec,
      wave,
      revision,
    );
    if (gates !== 'passed') return gates;
    wave.phase = 'Succeeded';
    wave.completedAt = iso(now);
    delete this.status.blockedBy;
    return 'next';
  }

  /** Records what blocks the rollout; `since` stays while the same gate blocks. Returns since (ms). */
  block(wave: string, gate: string, reason: string, message: string): number {
    const prev = this.status.blockedBy;
    const since = prev && prev.wave === wave && prev.gate === gate ? prev.since : iso(this.input.now);
    this.status.blockedBy = { wave, gate, reason, message, since };
    this.status.message = message;
    return Date.parse(since);
  }

  fail(wave: string, reason: string, message: string, gate = 'health') {
    const revision = this.status.revision!;
    const good = this.status.lastGoodRevision;
    this.status.failedRevision = revision;
    this.status.completedAt = iso(this.input.now);
    const since = iso(this.input.now);
    if (this.input.rollout.onFailure === 'revert' && good) {
      // digest-exact: every target moved by this rollout goes back to the recorded last good revision
      for (const t of this.targets.values())
        if (t.revision !== undefined && !sameRevision(t.revision, good)) this.pin(t, good);
      this.status.phase = 'Reverted';
      this.status.message = `${message}; reverted to ${good}`;
    } else {
      this.status.phase = 'Holding';
      this.status.message =
        this.input.rollout.onFailure === 'revert'
          ? `${message}; holding: no earlier revision went through every wave, nothing to revert to`
          : `${message}; holding for a person (onFailure: hold)`;
      this.status.message += `; to go on with it: annotate packagesync.io/resume=${approvalAnnotation(wave, revision)}`;
    }
    this.status.blockedBy = { wave, gate, reason, message, since };
  }

  /** Targets outside the running rollout's plan sit on the last good revision (no child before there is one). */
  settleOthers(inPlan: boolean) {
    const good = this.status.lastGoodRevision;
    for (const t of this.targets.values()) {
      if (inPlan && t.wave !== undefined) continue;
      if (t.revision === undefined && good) this.pin(t, good);
      // a target still on this rollout's revision keeps its wave's deadline (a stopped rollout still names it)
      const spec = this.input.rollout.waves.find((w) => w.name === t.wave);
      const onRollout = spec && sameRevision(t.revision, this.status.revision);
      this.observe(t, onRollout ? durationMs(spec.progressDeadline) : Number.POSITIVE_INFINITY);
    }
  }
}

export function stepRollout(input: StepInput): StepResult {
  const s = new Step(input);
  const st = s.status;
  st.observedGeneration = input.generation;
  const revision = input.revision;
  // a revision that failed stays failed (Reverted or Holding) until another one comes
  if (revision !== undefined && !sameRevision(revision, st.revision)) s.startRollout(revision);
  else if (revision === undefined && !st.revision) st.phase = 'Idle';
  else if (input.resume) resumeHeld(st, s.waves, s.targets, input.resume, input.now);

  const running = ['Progressing', 'Baking', 'Gating'].includes(st.phase ?? '');
  if (running) {
    let i = s.waves.findIndex((w) => w.phase !== 'Succeeded');
    while (i >= 0 && i < s.waves.length) {
      const outcome = s.driveWave(i);
      // a wave a window keeps from starting is still Pending: the rollout itself is progressing
      const wavePhase = s.waves[i]!.phase;
      st.phase =
        outcome === 'wait'
          ? wavePhase === 'Pending'
            ? 'Progressing'
            : (wavePhase as 'Progressing' | 'Baking' | 'Gating')
          : st.phase;
      if (outcome !== 'next') break;
      i++;
    }
    if (i >= s.waves.length || i < 0) {
      st.phase = 'Succeeded';
      st.lastGoodRevision = st.revision!;
      st.completedAt = new Date(input.now).toISOString();
      delete st.blockedBy;
      delete st.failedRevision;
      st.message = `${st.revision} went through ${s.waves.length} wave${s.waves.length === 1 ? '' : 's'}`;
      for (const t of s.targets.values()) s.pin(t, st.revision!);
    }
  }
  const stillRunning = ['Progressing', 'Baking', 'Gating'].includes(st.phase ?? '');
  s.settleOthers(stillRunning);

  if (s.note) st.message = `${s.note}${st.message ?? ''}`;
  // a set whose selector matches nothing says so, and where targets come from (a tenant's own namespace only)
  if (input.targets.length === 0 && st.revision) st.message = NO_TARGETS;
  st.waves = s.waves;
  st.targets = [...s.targets.values()];
  st.conditions = rolloutConditions(input.status?.conditions, st, input.generation, input.revisionError, input.now);
  const pins = new Map<string, string>();
  for (const t of s.targets.values()) if (t.revision !== undefined) pins.set(t.name, t.revision);
  const next = s.wakeAt.filter((t) => t > input.now).sort((a, b) => a - b)[0];
  return { status: st, pins, ...(next !== undefined ? { requeueAfterMs: next - input.now } : {}) };
}
