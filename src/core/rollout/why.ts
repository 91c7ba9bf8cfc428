/**
 * `packagesync why packagesyncset/NAME`: what a rollout waits on or stopped at, read from the set's status only
 * (docs/adr/0042): its phase and revision, the blocking gate of which wave and why (with the exact annotation to
 * set when a person is what it waits for), then the targets that are not healthy, first the failed ones.
 */
import type { SetStatus } from '../../api/packagesyncset.ts';

const TARGETS_SHOWN = 10;

export function setWhyLines(name: string, status: SetStatus | undefined): string[] {
  if (!status?.phase) return [`PackageSyncSet ${name}: not reconciled yet`];
  const lines = [`PackageSyncSet ${name}: ${status.phase}${status.revision ? ` on ${status.revision}` : ''}`];
  const b = status.blockedBy;
  if (b) {
    const what = ['health', 'bake'].includes(b.gate) ? b.gate : `gate ${b.gate}`;
    lines.push(`  blocked by ${what} of wave ${b.wave} since ${b.since}: ${b.reason}: ${b.message}`);
  } else if (status.message && status.phase !== 'Succeeded') lines.push(`  ${status.message}`);
  if ((status.phase === 'Holding' || status.phase === 'Reverted') && status.message && b)
    lines.push(`  ${status.message}`);
  const order = { Failed: 0, Unreachable: 1, Progressing: 2, Pending: 3, Healthy: 4 } as const;
  const notHealthy = (status.targets ?? [])
    .filter((t) => t.health !== 'Healthy' && t.wave !== undefined && (b === undefined || t.wave === b.wave))
    .sort((x, y) => order[x.health] - order[y.health] || (x.name < y.name ? -1 : 1));
  for (const t of notHealthy.slice(0, TARGETS_SHOWN))
    lines.push(
      `    target ${t.name} (PackageSync ${t.child}): ${t.health}${t.reason ? ` ${t.reason}` : ''}${t.message ? `: ${t.message}` : ''}`,
    );
  if (notHealthy.length > TARGETS_SHOWN) lines.push(`    … and ${notHealthy.length - TARGETS_SHOWN} more`);
  return lines;
}
