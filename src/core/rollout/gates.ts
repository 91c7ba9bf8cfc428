/**
 * A wave's gates, in order, once it is healthy and baked (docs/adr/0042): approval reads the annotation; http,
 * job and metric gates read the result the controller checked just before this step (gatesToCheck names which).
 * A gate that keeps not passing fails the wave after its timeout, counted from when it started blocking; a Job
 * that failed fails it at once.
 */
import type { Gate, SetSpec, SetStatus, Wave, WaveStatus } from '../../api/packagesyncset.ts';
import { durationMs } from '../../api/packagesync.ts';
import { commitOf, sameRevision } from './observe.ts';

export interface Approval {
  wave: string;
  revision: string;
  by?: string;
}

/** `<wave>@<revision>` or `<wave>@<revision>:<who>` (the value of packagesync.io/approve). */
export function parseApproval(value: string | undefined): Approval | undefined {
  const m = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)@([^:\s]+(?::[0-9a-f]{40,64})?)(?::(.+))?$/.exec(value?.trim() ?? '');
  if (!m) return undefined;
  return { wave: m[1]!, revision: m[3]!, ...(m[4] ? { by: m[4] } : {}) };
}

/**
 * The value of packagesync.io/approve (and of packagesync.io/resume: the same form) that parseApproval reads back:
 * `<wave>@<commit>`, `:<who>` when given. The revision is written as its commit (or digest) alone, as the gates'
 * messages ask for it; the CLI and the web UI write it with the caller's own name.
 */
export function approvalAnnotation(wave: string, revision: string, who?: string): string {
  return `${wave}@${commitOf(revision) ?? revision}${who ? `:${who}` : ''}`;
}

export interface GateResult {
  passed: boolean;
  /** Definitely failed (a Job that failed): the wave fails now, not after the gate's timeout. */
  failed?: boolean;
  message: string;
}

/** A gate the controller checks before the step: its result goes to StepInput.gateResults under `key`. */
export interface GateCheck {
  key: string;
  wave: string;
  gate: Gate;
  revision: string;
  /** The wave's resume attempt: a Job gate's Job is named by it, so a resumed wave runs its Job anew. */
  attempt: number;
}

export const GATE_RETRY_MS = 10_000;

export const gateKey = (wave: string, gate: string) => `${wave}/${gate}`;

/** What the step lends the gates: where to record a block, a failure and a wake-up. */
export interface GateHost {
  now: number;
  approval?: Approval;
  gateResults?: ReadonlyMap<string, GateResult>;
  block(wave: string, gate: string, reason: string, message: string): number;
  fail(wave: string, reason: string, message: string, gate?: string): void;
  wake(at: number): void;
}

const timeoutOf = (g: Gate): string | undefined => g.http?.timeout ?? g.job?.timeout ?? g.metric?.timeout;

export function checkGates(
  host: GateHost,
  spec: Wave,
  wave: WaveStatus,
  revision: string,
): 'passed' | 'wait' | 'failed' {
  for (const gate of spec.gates ?? []) {
    if (wave.gatesPassed?.includes(gate.name)) continue;
    if (gate.approval) {
      const a = host.approval;
      if (a && a.wave === wave.name && sameRevision(a.revision, revision)) {
        wave.gatesPassed = [...(wave.gatesPassed ?? []), gate.name];
        wave.approvedBy = a.by ?? 'unknown';
        wave.approvedAt = new Date(host.now).toISOString();
        continue;
      }
      host.block(
        wave.name,
        gate.name,
        'WaitingForApproval',
        `wave ${wave.name} waits for approval: annotate packagesync.io/approve=${wave.name}@${commitOf(revision) ?? revision}`,
      );
      return 'wait';
    }
    const result = host.gateResults?.get(gateKey(wave.name, gate.name));
    if (result?.passed) {
      wave.gatesPassed = [...(wave.gatesPassed ?? []), gate.name];
      continue;
    }
    const since = host.block(
      wave.name,
      gate.name,
      'GateNotPassed',
      `gate ${gate.name}: ${result?.message ?? 'not checked yet'}`,
    );
    if (result?.failed) {
      wave.phase = 'Failed';
      host.fail(wave.name, 'GateFailed', `wave ${wave.name}: gate ${gate.name} failed: ${result.message}`, gate.name);
      return 'failed';
    }
    const timeout = timeoutOf(gate);
    if (timeout !== undefined && host.now - since > durationMs(timeout)) {
      wave.phase = 'Failed';
      host.fail(
        wave.name,
        'GateFailed',
        `wave ${wave.name}: gate ${gate.name} failed for ${timeout}: ${result?.message ?? 'no answer'}`,
        gate.name,
      );
      return 'failed';
    }
    host.wake(host.now + GATE_RETRY_MS);
    return 'wait';
  }
  return 'passed';
}

/** The gates the controller must check before the next step: the one the active wave is blocked on. */
export function gatesToCheck(rollout: SetSpec['rollout'], status: SetStatus | undefined): GateCheck[] {
  const b = status?.blockedBy;
  if (!b || status?.phase !== 'Gating' || !status.revision) return [];
  const wave = rollout.waves.find((w) => w.name === b.wave);
  const ws = status.waves?.find((w) => w.name === b.wave);
  for (const g of wave?.gates ?? []) {
    if (ws?.gatesPassed?.includes(g.name)) continue;
    // gates run in order: an approval before it blocks first
    if (g.approval) return [];
    return [
      { key: gateKey(b.wave, g.name), wave: b.wave, gate: g, revision: status.revision, attempt: ws?.attempt ?? 0 },
    ];
  }
  return [];
}
