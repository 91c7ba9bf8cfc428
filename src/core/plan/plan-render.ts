/**
 * A plan as people and machines read it: text for a terminal, markdown for a pull-request comment (a
 * summary table, then the details folded), and the JSON document whose shape docs/cli.md#plan documents.
 * Pure: the same plan always renders the same bytes.
 */
import type { FieldChange } from './field-changes.ts';
import type { Plan, PlanAction, PlanActionType } from './plan-report.ts';

/** What `packagesync plan -o json` prints. */
export interface PlanDocument {
  apiVersion: 'packagesync.io/v1alpha1';
  kind: 'Plan';
  packageSync: { namespace: string; name: string };
  /** Where the package came from: the resolved git revision, or the local directory. */
  source: { revision: string; url?: string; dir?: string };
  /** The user the dry runs acted as (the PackageSync's ServiceAccount), or null for the CLI's own. */
  identity: string | null;
  digest: string;
  renderDigest: string;
  wouldFail: boolean;
  prunesBlocked: boolean;
  pruneBudget?: { exceeded: boolean; message?: string };
  summary: Plan['summary'];
  actions: PlanAction[];
  /** What the render noticed but applies anyway (a key the render tool wrote twice: docs/adr/0034). */
  warnings?: string[];
}

export function planDocument(
  header: Pick<PlanDocument, 'packageSync' | 'source' | 'identity'>,
  plan: Plan,
  warnings: readonly string[] = [],
): PlanDocument {
  return {
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'Plan',
    ...header,
    digest: plan.digest,
    renderDigest: plan.renderDigest,
    wouldFail: plan.wouldFail,
    prunesBlocked: plan.prunesBlocked,
    ...(plan.pruneBudget ? { pruneBudget: plan.pruneBudget } : {}),
    summary: plan.summary,
    actions: plan.actions,
    ...(warnings.length > 0 ? { warnings: [...warnings] } : {}),
  };
}

const MARK: Record<PlanActionType, string> = {
  create: '+',
  update: '~',
  recreate: '-/+',
  prune: '-',
  keep: '=',
  conflict: '!',
  reject: '!',
  immutable: '!',
  skip: '!',
};

const VERB: Record<PlanActionType, string> = {
  create: 'create',
  update: 'update',
  recreate: 'recreate',
  prune: 'prune',
  keep: 'keep',
  conflict: 'conflict',
  reject: 'rejected',
  immutable: 'immutable',
  skip: 'skipped',
};

/** `1 to create, 2 to update, …`: only what is there, unchanged always. */
export function summaryLine(s: Plan['summary']): string {
  const parts = [
    s.create && `${s.create} to create`,
    s.update && `${s.update} to update`,
    s.recreate && `${s.recreate} to recreate`,
    s.prune && `${s.prune} to prune`,
    s.keep && `${s.keep} kept`,
    s.conflict && `${s.conflict} conflict${s.conflict > 1 ? 's' : ''}`,
    s.reject && `${s.reject} rejected`,
    s.immutable && `${s.immutable} immutable`,
    s.skip && `${s.skip} skipped`,
    `${s.unchanged} unchanged`,
    s.rolls && `${s.rolls} workload${s.rolls > 1 ? 's' : ''} would roll`,
  ];
  return parts.filter((p) => p).join(', ');
}

function change(c: FieldChange): string {
  return `${c.path}: ${c.old ?? '(none)'} → ${c.new ?? '(removed)'}`;
}

/** The explanation lines under an action (indented by the caller). */
function details(a: PlanAction): string[] {
  switch (a.action) {
    case 'update':
      return a.changes!.length > 0
        ? a.changes!.map(change)
        : ['(no field changes: only the package digest annotation is stamped)'];
    case 'conflict':
      return [
        ...a.conflicts!.map((c) => `${c.field} is owned by field manager "${c.manager}"`),
        ...(a.conflicts!.length === 0 ? [a.message!] : []),
      ];
    case 'immutable':
      return [`${a.message}`];
    case 'recreate':
      return [
        `${a.fields!.length > 0 ? a.fields!.join(', ') : 'an immutable field'} changes: deleted and created again (spec.force)`,
      ];
    case 'reject':
      return [a.message!];
    case 'skip':
      return [`depends on ${a.dependsOn}, which would fail`];
    case 'keep':
      return [a.message!];
    default:
      return [];
  }
}

function verdict(plan: Pick<PlanDocument, 'pruneBudget' | 'wouldFail' | 'prunesBlocked' | 'warnings'>): string[] {
  const out: string[] = (plan.warnings ?? []).map((w) => `Warning: ${w}`);
  if (plan.pruneBudget?.exceeded) out.push(`The prune budget would stop the run: ${plan.pruneBudget.message}`);
  if (plan.wouldFail && !plan.pruneBudget?.exceeded)
    out.push('The apply would fail: the objects marked ! would not be applied, everything else would.');
  if (plan.prunesBlocked) out.push('Nothing would be pruned: prune runs only after a fully successful apply.');
  return out;
}

export function renderPlanText(doc: PlanDocument): string {
  const lines = [
    `Plan for PackageSync ${doc.packageSync.namespace}/${doc.packageSync.name} at ${doc.source.revision}` +
      (doc.identity ? ` as ${doc.identity}` : ''),
    '',
  ];
  for (const a of doc.actions) {
    const suffix = [a.file && `(${a.file})`, a.rolls && 'Pods would roll'].filter((p) => p).join('  ');
    lines.push(`${MARK[a.action].padEnd(3)} ${VERB[a.action].padEnd(9)} ${a.id}${suffix ? `  ${suffix}` : ''}`);
    for (const d of details(a)) lines.push(`      ${d}`);
  }
  if (doc.actions.length === 0) lines.push('No changes.');
  lines.push('', summaryLine(doc.summary), ...verdict(doc), `Plan digest: ${doc.digest}`);
  return `${lines.join('\n')}\n`;
}

/** Markdown cells: a pipe or a newline would end the cell. */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderPlanMarkdown(doc: PlanDocument): string {
  const s = doc.summary;
  const status = doc.wouldFail
    ? '❌ would fail'
    : doc.actions.some((a) => a.action !== 'keep')
      ? '📝 changes'
      : '✅ no changes';
  const lines = [
    `### PackageSync \`${doc.packageSync.namespace}/${doc.packageSync.name}\`: ${status}`,
    '',
    `Revision \`${doc.source.revision}\`${doc.identity ? ` as \`${doc.identity}\`` : ''}`,
    '',
    '| create | update | recreate | prune | conflicts | rejected | immutable | skipped | unchanged | rolls |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${s.create} | ${s.update} | ${s.recreate} | ${s.prune} | ${s.conflict} | ${s.reject} | ${s.immutable} | ${s.skip} | ${s.unchanged} | ${s.rolls} |`,
    '',
  ];
  for (const v of verdict(doc)) lines.push(`> ${v}`, '');
  if (doc.actions.length > 0) {
    lines.push('<details><summary>Details</summary>', '', '| | action | object | details |', '|---|---|---|---|');
    for (const a of doc.actions) {
      const info = [a.file && `from \`${a.file}\``, a.rolls && 'Pods would roll', ...details(a)].filter((p) => p);
      lines.push(
        `| ${cell(MARK[a.action])} | ${VERB[a.action]} | \`${cell(a.id)}\` | ${info.map((i) => cell(String(i))).join('<br>')} |`,
      );
    }
    lines.push('', '</details>', '');
  }
  // the same last line as text (docs/cli.md): one pattern finds the digest in either output
  lines.push(`Plan digest: ${doc.digest}`);
  return `${lines.join('\n')}\n`;
}
