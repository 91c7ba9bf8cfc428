/**
 * `packagesync plan packagesyncset/NAME` as data (docs/cli.md#plan-packagesyncsetname): the revision the set would
 * roll out now, its targets grouped by wave in the order the rollout would go, and for each target the same plan
 * document `packagesync plan` prints for one PackageSync — or why that target could not be planned. Pure: the
 * CLI gathers, this decides the grouping, the counts and the verdict, and renders them.
 */
import type { SetSpec, SetStatus } from '../../api/packagesyncset.ts';
import { hasPlannedChanges } from '../plan/plan-report.ts';
import type { PlanDocument } from '../plan/plan-render.ts';
import { sameRevision } from './observe.ts';
import type { Target } from './targets.ts';
import { planWaves, type WavePlan } from './waves.ts';

export interface SetPlanTarget {
  name: string;
  cluster: string;
  directory?: string;
  /** The child PackageSync stamped for it. */
  child: string;
  plan?: PlanDocument;
  /**
   * Not planned: `unreachable` when its cluster did not answer or refused a request (the plan is unknown), else
   * something applying there would fail on too (its kubeconfig Secret, its render, a child name taken).
   */
  error?: { unreachable: boolean; message: string };
}

export interface SetPlanCounts {
  targets: number;
  planned: number;
  /** Planned targets whose plan has changes. */
  changed: number;
  /** Planned targets whose apply would fail, plus targets that could not be planned for a reason that would fail them. */
  wouldFail: number;
  unreachable: number;
}

export interface SetPlanWave {
  name: string;
  counts: SetPlanCounts;
  targets: SetPlanTarget[];
}

/** What `packagesync plan packagesyncset/NAME -o json` prints. */
export interface SetPlanDocument {
  apiVersion: 'packagesync.io/v1alpha1';
  kind: 'SetPlan';
  packageSyncSet: { namespace: string; name: string };
  /** The revision the template's ref names now: what the set would roll out. */
  revision: string;
  /** The set's rollout as its status records it. */
  rollout: { phase?: string; revision?: string; lastGoodRevision?: string };
  waves: SetPlanWave[];
  /** Targets no wave takes: the rollout never moves them. */
  unassigned: string[];
  counts: SetPlanCounts;
}

/**
 * The waves a rollout of `revision` goes through: those frozen in status when that very revision is the one rolling
 * out (docs/adr/0042: waves are fixed when a rollout starts), else the ones a rollout starting now would take.
 */
export function rolloutWaves(
  targets: readonly Target[],
  rollout: SetSpec['rollout'],
  status: SetStatus | undefined,
  revision: string,
): { plan: WavePlan[]; unassigned: string[] } {
  const frozen = status?.targets?.some((t) => t.wave !== undefined);
  if (!frozen || !sameRevision(status?.revision, revision)) return planWaves(targets, rollout.waves);
  const current = new Set(targets.map((t) => t.name));
  const plan = (status!.waves ?? []).map((w) => ({
    name: w.name,
    targets: status!
      .targets!.filter((t) => t.wave === w.name && current.has(t.name))
      .map((t) => t.name)
      .sort(),
  }));
  const taken = new Set(plan.flatMap((w) => w.targets));
  return { plan, unassigned: [...current].filter((n) => !taken.has(n)).sort() };
}

function countsOf(targets: readonly SetPlanTarget[]): SetPlanCounts {
  const c: SetPlanCounts = { targets: targets.length, planned: 0, changed: 0, wouldFail: 0, unreachable: 0 };
  for (const t of targets) {
    if (t.plan) {
      c.planned++;
      if (hasPlannedChanges(t.plan)) c.changed++;
      if (t.plan.wouldFail) c.wouldFail++;
    } else if (t.error?.unreachable) c.unreachable++;
    else c.wouldFail++;
  }
  return c;
}

export function setPlanDocument(
  header: Pick<SetPlanDocument, 'packageSyncSet' | 'revision' | 'rollout' | 'unassigned'>,
  waves: readonly { name: string; targets: SetPlanTarget[] }[],
): SetPlanDocument {
  return {
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'SetPlan',
    ...header,
    waves: waves.map((w) => ({ name: w.name, counts: countsOf(w.targets), targets: w.targets })),
    counts: countsOf(waves.flatMap((w) => w.targets)),
  };
}

/** The answer scripts get: would fail (somewhere) before unknown (a target not planned) before changes. */
export function setPlanVerdict(doc: SetPlanDocument): 'wouldFail' | 'partial' | 'changes' | 'none' {
  if (doc.counts.wouldFail > 0) return 'wouldFail';
  if (doc.counts.unreachable > 0) return 'partial';
  return doc.counts.changed > 0 ? 'changes' : 'none';
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `3 targets: 2 planned (1 with changes), 1 unreachable`. */
export function countsLine(c: SetPlanCounts): string {
  const parts = [`${c.planned} planned (${c.changed} with changes)`];
  if (c.wouldFail > 0) parts.push(`${c.wouldFail} would fail`);
  if (c.unreachable > 0) parts.push(`${c.unreachable} unreachable`);
  return `${plural(c.targets, 'target')}: ${parts.join(', ')}`;
}

export interface SetPlanStyle {
  /** One target's plan, as `packagesync plan` renders one PackageSync's. */
  plan(doc: PlanDocument): string;
  heading(level: 1 | 2 | 3, text: string): string;
}

export const TEXT_STYLE = (plan: (doc: PlanDocument) => string): SetPlanStyle => ({
  plan,
  heading: (level, text) => `${['', '#', '==', '--'][level]} ${text}`,
});

export const MARKDOWN_STYLE = (plan: (doc: PlanDocument) => string): SetPlanStyle => ({
  plan,
  heading: (level, text) => `${'#'.repeat(level + 1)} ${text}`,
});

function targetLabel(t: SetPlanTarget): string {
  return `target ${t.name} (cluster ${t.cluster}${t.directory !== undefined ? `, directory ${t.directory}` : ''}; PackageSync ${t.child})`;
}

export function renderSetPlan(doc: SetPlanDocument, style: SetPlanStyle): string {
  const { namespace, name } = doc.packageSyncSet;
  const lines = [
    style.heading(
      1,
      `Plan for PackageSyncSet ${namespace}/${name} at ${doc.revision}: ${plural(doc.counts.targets, 'target')} in ${plural(doc.waves.length, 'wave')}`,
    ),
  ];
  const r = doc.rollout;
  if (r.revision)
    lines.push(
      `Rollout now: ${r.phase ?? 'Idle'} ${r.revision}${r.lastGoodRevision ? `; last good ${r.lastGoodRevision}` : ''}`,
    );
  lines.push('');
  doc.waves.forEach((w, i) => {
    lines.push(style.heading(2, `wave ${i + 1} of ${doc.waves.length}: ${w.name} — ${countsLine(w.counts)}`), '');
    if (w.targets.length === 0) lines.push('(no target)', '');
    for (const t of w.targets) {
      lines.push(style.heading(3, targetLabel(t)));
      if (t.plan) lines.push(style.plan(t.plan));
      else lines.push(`Not planned (${t.error!.unreachable ? 'unreachable' : 'would fail'}): ${t.error!.message}`, '');
    }
  });
  if (doc.unassigned.length > 0)
    lines.push(`Not in any wave (the rollout leaves them where they are): ${doc.unassigned.join(', ')}`, '');
  const unreachable = doc.waves.flatMap((w) => w.targets).filter((t) => t.error?.unreachable);
  lines.push(
    `Summary: ${countsLine(doc.counts)}${unreachable.length > 0 ? `; unreachable: ${unreachable.map((t) => t.name).join(', ')}` : ''}`,
  );
  return `${lines.join('\n')}\n`;
}
