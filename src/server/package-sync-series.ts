/**
 * The series each PackageSync has (packagesync_condition: 9, one per type and status as Flux's
 * gotk_reconcile_condition; packagesync_drifted_objects: 1), kept as exposition text. prom-client formats every
 * series again on every scrape: at 5,000 PackageSyncs that was 19 % of a restarted controller's CPU with a scrape
 * a second (bench/profiles/fleet-5000-restart.txt), for values that change only when a status does. So each
 * PackageSync's lines are formatted when its status event arrives, and a scrape only joins them, under the
 * families' HELP and TYPE lines prom-client already wrote (their gauges stay registered, without values, so the
 * registry still lists what is exported).
 */
export const CONDITION_TYPES = ['Ready', 'Reconciling', 'Stalled'] as const;
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
export type ConditionStatus = (typeof CONDITION_STATUSES)[number];

export const CONDITION_METRIC = 'packagesync_condition';
export const DRIFTED_METRIC = 'packagesync_drifted_objects';

export class PackageSyncSeries {
  private readonly conditions = new Map<string, string>();
  private readonly drifted = new Map<string, string>();

  set(
    namespace: string,
    name: string,
    statuses: Readonly<Record<(typeof CONDITION_TYPES)[number], ConditionStatus>>,
    driftedObjects: number,
  ): void {
    const key = `${namespace}/${name}`;
    const id = `name="${escapeLabel(name)}",namespace="${escapeLabel(namespace)}"`;
    let lines = '';
    for (const type of CONDITION_TYPES)
      for (const s of CONDITION_STATUSES)
        lines += `${CONDITION_METRIC}{${id},type="${type}",status="${s}"} ${statuses[type] === s ? 1 : 0}\n`;
    this.conditions.set(key, lines);
    this.drifted.set(key, `${DRIFTED_METRIC}{${id}} ${driftedObjects}\n`);
  }

  forget(namespace: string, name: string): void {
    this.conditions.delete(`${namespace}/${name}`);
    this.drifted.delete(`${namespace}/${name}`);
  }

  /** prom-client's exposition with each family's samples right after its TYPE line (one group per family). */
  insertInto(exposition: string): string {
    let text = exposition;
    for (const [metric, lines] of [
      [CONDITION_METRIC, this.conditions],
      [DRIFTED_METRIC, this.drifted],
    ] as const) {
      const type = `# TYPE ${metric} gauge\n`;
      const at = text.indexOf(type);
      if (at < 0 || lines.size === 0) continue;
      const end = at + type.length;
      text = text.slice(0, end) + [...lines.values()].join('') + text.slice(end);
    }
    return text;
  }
}

/** As the text format wants label values: backslash, double quote and line feed escaped. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}
