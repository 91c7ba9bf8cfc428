/**
 * The web UI's HTTP API for PackageSyncSets (rollouts, docs/adr/0042, 0045): the list query as a zod schema (the
 * server validates it), the answers as types built from the set's own zod types, so the server and the browser
 * (web/, type-only imports) cannot drift from the set they show.
 */
import { z } from 'zod';
import type { Condition } from '../../api/status-schema.ts';
import type { SetPhase, TargetHealth, WaveStatus } from '../../api/packagesyncset.ts';
import type { FleetState } from './fleet-states.ts';
import type { EventRecord } from './api-types.ts';

/** GET /api/packagesyncsets?namespace=&q= */
export const SetListQuerySchema = z.object({
  namespace: z.string().max(253).optional(),
  /** Substring of namespace/name, phase, revision or message; case-insensitive. */
  q: z.string().max(256).optional(),
});
export type SetListQuery = z.infer<typeof SetListQuerySchema>;

export interface SetRow {
  namespace: string;
  name: string;
  /** kstatus, as a PackageSync's: Ready, Reconciling, Stalled, Failed. */
  state: FleetState;
  phase?: SetPhase;
  revision?: string;
  /** Waves done of all waves, e.g. 1/3. */
  wavesDone: number;
  waves: number;
  targets: number;
  /** What blocks the rollout, in a few words (`approval of wave canary`), or the status message. */
  message: string;
  createdAt?: string;
}

export interface SetListPage {
  items: SetRow[];
  /** Sets listed before the cap; the list shows the first SETS_SHOWN. */
  total: number;
  namespaces: string[];
  /** The API server's refusal of the shared watch (or: no PackageSyncSet CRD on this cluster). */
  refused?: string;
}

export interface TargetView {
  name: string;
  cluster: string;
  directory?: string;
  /** The child PackageSync's name in the set's namespace. */
  child: string;
  /** The child exists on this cluster and the viewer may read it: the page links to it. */
  linked: boolean;
  revision?: string;
  health: TargetHealth;
  reason?: string;
  message?: string;
  startedAt?: string;
}

export interface GateView {
  name: string;
  kind: 'approval' | 'http' | 'job' | 'metric';
  passed: boolean;
}

/** A wave in spec order, with what status says of it (a wave not reached yet has only its spec). */
export interface WaveView extends Partial<Omit<WaveStatus, 'name'>> {
  name: string;
  /** spec.bakeTime, as written (30m). */
  bakeTime: string;
  /** While the wave bakes: when its bake time ends (healthyAt + bakeTime). */
  bakeEndsAt?: string;
  gates: GateView[];
  targets: TargetView[];
}

export interface SetDetail {
  namespace: string;
  name: string;
  state: FleetState;
  generation?: number;
  observedGeneration?: number;
  phase?: SetPhase;
  revision?: string;
  lastGoodRevision?: string;
  failedRevision?: string;
  message?: string;
  onFailure: 'revert' | 'hold';
  source: { url?: string; address: string; version: string };
  conditions: Condition[];
  blockedBy?: { wave: string; gate: string; reason: string; message: string; since: string };
  /** `packagesync why packagesyncset/NAME`'s lines (core/rollout/why.ts), the same function the command runs. */
  why: string[];
  waves: WaveView[];
  /** Targets in no wave of the rollout (they get the revision once it went through every wave). */
  unplanned: TargetView[];
  /** The wave waiting for a person's approval of `revision`: what "Approve" writes. */
  approvable?: { wave: string; revision: string };
  /** A held rollout (phase Holding): what "Resume" writes. */
  resumable?: { wave: string; revision: string };
  events: EventRecord[];
  /** Why some of the page could not be read (the children refused). */
  notes: string[];
}

export const SET_ACTIONS = ['approve', 'resume'] as const;
export type SetAction = (typeof SET_ACTIONS)[number];
