/**
 * PackageSyncSets as the web UI shows them, from the set alone (pure): a row of the rollouts list, and a set's
 * page — its waves in spec order with their targets, the bake time left, the gate that blocks and why (the
 * lines `packagesync why packagesyncset/NAME` prints), and what a person may approve or resume now.
 */
import { durationMs } from '../../api/packagesync.ts';
import type { Gate, PackageSyncSet, TargetStatus } from '../../api/packagesyncset.ts';
import { sameRevision } from '../../core/rollout/observe.ts';
import { setWhyLines } from '../../core/rollout/why.ts';
import { sourceAddress } from '../../core/source-address.ts';
import type { EventRecord } from './api-types.ts';
import { kstatusState } from './fleet.ts';
import type { GateView, SetDetail, SetListPage, SetListQuery, SetRow, TargetView, WaveView } from './set-types.ts';

/** Rows one list answer carries: sets are a fleet's few, not its thousands. */
export const SETS_SHOWN = 500;

export function setRow(set: PackageSyncSet): SetRow {
  const s = set.status;
  const b = s?.blockedBy;
  return {
    namespace: set.metadata.namespace,
    name: set.metadata.name,
    state: kstatusState(s, set.metadata.generation),
    ...(s?.phase ? { phase: s.phase } : {}),
    ...(s?.revision ? { revision: s.revision } : {}),
    wavesDone: (s?.waves ?? []).filter((w) => w.phase === 'Succeeded').length,
    waves: set.spec?.rollout?.waves?.length ?? 0,
    targets: s?.targets?.length ?? 0,
    message: b ? blockedText(b.gate, b.wave, b.reason) : (s?.message ?? 'the controller has not reconciled it yet'),
    createdAt: (set.metadata as { creationTimestamp?: string }).creationTimestamp,
  };
}

/** `approval of wave canary (WaitingForApproval)`: what stops the rollout, for a row. */
function blockedText(gate: string, wave: string, reason: string): string {
  const what = gate === 'health' || gate === 'bake' ? gate : `gate ${gate}`;
  return `${what} of wave ${wave} (${reason})`;
}

export function setListPage(all: Iterable<PackageSyncSet>, query: SetListQuery): Omit<SetListPage, 'refused'> {
  const namespaces = new Set<string>();
  const text = query.q?.trim().toLowerCase();
  const rows: SetRow[] = [];
  for (const set of all) {
    const row = setRow(set);
    namespaces.add(row.namespace);
    if (query.namespace && row.namespace !== query.namespace) continue;
    const fields = [`${row.namespace}/${row.name}`, row.phase ?? '', row.revision ?? '', row.message];
    if (text && !fields.some((f) => f.toLowerCase().includes(text))) continue;
    rows.push(row);
  }
  rows.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return { items: rows.slice(0, SETS_SHOWN), total: rows.length, namespaces: [...namespaces].sort() };
}

export interface SetDetailInput {
  set: PackageSyncSet;
  /** Names of the set's children the viewer could list in its namespace (linked); undefined: not listed. */
  children: ReadonlySet<string>;
  events: EventRecord[];
  notes: string[];
  now: number;
}

const gateKind = (g: Gate): GateView['kind'] => (g.approval ? 'approval' : g.http ? 'http' : g.job ? 'job' : 'metric');

export function setDetail({ set, children, events, notes, now }: SetDetailInput): SetDetail {
  const s = set.status ?? {};
  const { namespace, name } = set.metadata;
  const target = (t: TargetStatus): TargetView => ({ ...t, linked: children.has(t.child) });
  const targets = s.targets ?? [];
  const specWaves = set.spec.rollout.waves;
  const waves: WaveView[] = specWaves.map((spec) => {
    const w = s.waves?.find((x) => x.name === spec.name);
    const bakeEnd = w?.healthyAt ? Date.parse(w.healthyAt) + durationMs(spec.bakeTime) : undefined;
    return {
      ...w,
      name: spec.name,
      bakeTime: spec.bakeTime,
      ...(w?.phase === 'Baking' && bakeEnd !== undefined && bakeEnd > now
        ? { bakeEndsAt: new Date(bakeEnd).toISOString() }
        : {}),
      gates: (spec.gates ?? []).map((g) => ({
        name: g.name,
        kind: gateKind(g),
        passed: w?.gatesPassed?.includes(g.name) ?? false,
      })),
      targets: targets.filter((t) => t.wave === spec.name).map(target),
    };
  });
  const inWaves = new Set(specWaves.map((w) => w.name));
  const b = s.blockedBy;
  const approvable =
    b?.reason === 'WaitingForApproval' && s.revision ? { wave: b.wave, revision: s.revision } : undefined;
  const resumable = s.phase === 'Holding' && b && s.revision ? { wave: b.wave, revision: s.revision } : undefined;
  return {
    namespace,
    name,
    state: kstatusState(s, set.metadata.generation),
    generation: set.metadata.generation,
    observedGeneration: s.observedGeneration,
    phase: s.phase,
    revision: s.revision,
    lastGoodRevision: s.lastGoodRevision,
    failedRevision: s.failedRevision,
    message: s.message,
    onFailure: set.spec.rollout.onFailure,
    source: { url: set.spec.template.spec.source.url, ...sourceAddress(set.spec.template.spec.source) },
    conditions: s.conditions ?? [],
    ...(b ? { blockedBy: b } : {}),
    why: setWhyLines(`${namespace}/${name}`, set.status),
    waves,
    unplanned: targets.filter((t) => t.wave === undefined || !inWaves.has(t.wave)).map(target),
    ...(approvable ? { approvable } : {}),
    ...(resumable ? { resumable } : {}),
    events,
    notes,
  };
}

/**
 * Why approving `wave` of `revision` is refused now, or undefined: only the wave the set waits on for a person,
 * of the revision it rolls out — what the page showed. A page left open while the rollout moved on approves
 * nothing it did not show (an approval of a newer revision's wave must be a new decision).
 */
export function approveRefusal(set: PackageSyncSet, wave: string, revision: string): string | undefined {
  const s = set.status;
  const b = s?.blockedBy;
  const id = `PackageSyncSet ${set.metadata.namespace}/${set.metadata.name}`;
  if (b?.reason !== 'WaitingForApproval') return `${id} waits for no approval now: reload`;
  if (b.wave !== wave || !sameRevision(s?.revision, revision))
    return `${id} waits for approval of wave ${b.wave} of ${s?.revision ?? '?'}, not wave ${wave} of ${revision || '?'}: reload`;
  return undefined;
}

/** Why resuming `wave` of `revision` is refused now: only a held rollout, at the wave and revision it holds. */
export function resumeRefusal(set: PackageSyncSet, wave: string, revision: string): string | undefined {
  const s = set.status;
  const id = `PackageSyncSet ${set.metadata.namespace}/${set.metadata.name}`;
  if (s?.phase !== 'Holding' || !s.blockedBy) return `${id} is not holding a rollout (phase ${s?.phase ?? 'none'})`;
  if (s.blockedBy.wave !== wave || !sameRevision(s.revision, revision))
    return `${id} holds wave ${s.blockedBy.wave} of ${s.revision ?? '?'}, not wave ${wave} of ${revision || '?'}: reload`;
  return undefined;
}
