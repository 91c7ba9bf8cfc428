/**
 * A fleet as plain data for the rollout tests: each target's child PackageSync answers the pin it was given the
 * way a real one would (not pinned yet → healthy after `healAfter` steps, or stalled, or unreachable), so the step
 * function is driven as the controller drives it: step → pins → children → step.
 */
import { SetSpecSchema, type SetSpecInput, type SetStatus } from '../../api/packagesyncset.ts';
import type { ChildObservation } from './observe.ts';
import type { Resume } from './resume.ts';
import { stepRollout, type Approval, type GateResult, type StepResult } from './step.ts';
import { generateTargets, type ClusterSecret, type Target } from './targets.ts';

export const REV1 = `main@sha1:${'1'.repeat(40)}`;
export const REV2 = `main@sha1:${'2'.repeat(40)}`;
export const REV3 = `main@sha1:${'3'.repeat(40)}`;
export const commit = (rev: string) => rev.slice(-40);

export type Behaviour = 'healthy' | 'fails' | 'unreachable' | 'slow';

export function secrets(n: number, labels: (i: number) => Record<string, string> = () => ({})): ClusterSecret[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `c${String(i).padStart(3, '0')}`,
    namespace: 'team-a',
    labels: { 'packagesync.io/secret-type': 'cluster', ...labels(i) },
  }));
}

export function rolloutSpec(rollout: SetSpecInput['rollout']) {
  return SetSpecSchema.parse({
    template: { spec: { source: { url: 'https://git.example/p.git', ref: { branch: 'main' } } } },
    generators: { clusters: {} },
    rollout,
  }).rollout;
}

export class Fleet {
  targets: Target[];
  status: SetStatus | undefined;
  pins = new Map<string, string>();
  /** child observations: what the children report now */
  children = new Map<string, ChildObservation & { since: number }>();
  behaviour = new Map<string, (rev: string) => Behaviour>();
  now = Date.parse('2026-11-27T10:00:00Z');
  generation = 1;
  last!: StepResult;
  /** every (step, target, revision) pin change, in order */
  history: { step: number; target: string; revision: string }[] = [];
  steps = 0;
  approval: Approval | undefined;
  resume: Resume | undefined;
  gateResults = new Map<string, GateResult>();
  readonly rollout: ReturnType<typeof rolloutSpec>;

  constructor(secretList: ClusterSecret[], rollout: ReturnType<typeof rolloutSpec>) {
    this.targets = generateTargets({ name: 'web', namespace: 'team-a' }, secretList, undefined);
    this.rollout = rollout;
  }

  /** One controller pass: step, then the children take their new pins (and react one pass later). */
  step(revision: string | undefined): StepResult {
    this.steps++;
    this.last = stepRollout({
      rollout: this.rollout,
      status: this.status ? structuredClone(this.status) : undefined,
      generation: this.generation,
      targets: this.targets,
      children: this.children,
      ...(revision !== undefined ? { revision } : {}),
      ...(this.approval ? { approval: this.approval } : {}),
      ...(this.resume ? { resume: this.resume } : {}),
      gateResults: this.gateResults,
      now: this.now,
    });
    // the status is written first (crash-safe order), then children follow the pins
    this.status = structuredClone(this.last.status);
    for (const [name, rev] of this.last.pins) {
      if (this.pins.get(name) !== rev) this.history.push({ step: this.steps, target: name, revision: rev });
      this.pins.set(name, rev);
    }
    for (const name of [...this.pins.keys()]) if (!this.last.pins.has(name)) this.pins.delete(name);
    this.react();
    return this.last;
  }

  /** Children move to their pins: the first pass they are pinned and progressing, the next they settle. */
  react() {
    for (const [name, rev] of this.pins) {
      const c = this.children.get(name);
      if (!c || c.pinnedCommit !== commit(rev)) {
        this.children.set(name, {
          ...(c ?? {}),
          pinnedCommit: commit(rev),
          ready: 'Unknown',
          reason: 'Progressing',
          stalled: false,
          since: this.steps,
          generation: 1,
          observedGeneration: 1,
        });
        continue;
      }
      const b = this.behaviour.get(name)?.(rev) ?? 'healthy';
      if (b === 'slow') continue;
      if (b === 'healthy')
        Object.assign(c, {
          ready: 'True',
          reason: 'ReconciliationSucceeded',
          lastAppliedRevision: `sha1:${commit(rev)}`,
          lastAttemptedRevision: `sha1:${commit(rev)}`,
          stalled: false,
        });
      if (b === 'fails')
        Object.assign(c, {
          ready: 'False',
          reason: 'HealthCheckFailed',
          message: 'Deployment/web: 0 of 1 ready',
          lastAttemptedRevision: `sha1:${commit(rev)}`,
          stalled: true,
        });
      if (b === 'unreachable')
        Object.assign(c, {
          ready: 'False',
          reason: 'RemoteClusterUnreachable',
          message: 'the cluster did not answer',
          stalled: false,
        });
    }
    for (const name of [...this.children.keys()]) if (!this.pins.has(name)) this.children.delete(name);
  }

  advance(ms: number) {
    this.now += ms;
  }

  wave(name: string) {
    return this.status?.waves?.find((w) => w.name === name);
  }

  target(name: string) {
    return this.status?.targets?.find((t) => t.name === name);
  }
}
