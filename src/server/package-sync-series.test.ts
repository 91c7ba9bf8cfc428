import { describe, expect, it } from 'vitest';
import { createMetrics } from './metrics.ts';
import { PackageSyncSeries } from './package-sync-series.ts';

const ready = { Ready: 'True', Reconciling: 'False', Stalled: 'False' } as const;

describe('PackageSyncSeries', () => {
  it("puts each family's samples right under its own TYPE line, one group per family", async () => {
    const m = createMetrics({ processMetrics: false });
    for (const name of ['a', 'b']) {
      m.setConditions({
        metadata: { name, namespace: 'ns' },
        status: { conditions: [{ type: 'Ready', status: 'True', reason: 'x', message: '', lastTransitionTime: '' }] },
      } as never);
    }
    const lines = (await m.render()).body.split('\n');
    for (const [family, count] of [
      ['packagesync_condition', 18],
      ['packagesync_drifted_objects', 2],
    ] as const) {
      const at = lines.indexOf(`# TYPE ${family} gauge`);
      expect(at).toBeGreaterThan(0);
      expect(lines[at - 1]).toMatch(new RegExp(`^# HELP ${family} `));
      const samples = lines.filter((l) => l.startsWith(`${family}{`));
      expect(samples).toHaveLength(count);
      // contiguous, right after TYPE
      expect(lines.slice(at + 1, at + 1 + count)).toEqual(samples);
    }
  });

  it('escapes label values as the text format wants, and forgets a PackageSync whole', () => {
    const s = new PackageSyncSeries();
    s.set('ns', 'we"ird\\name', ready, 3);
    s.set('ns', 'other', ready, 0);
    const text = s.insertInto(
      '# HELP packagesync_condition x\n# TYPE packagesync_condition gauge\n# HELP packagesync_drifted_objects y\n# TYPE packagesync_drifted_objects gauge\n',
    );
    expect(text).toContain(
      'packagesync_condition{name="we\\"ird\\\\name",namespace="ns",type="Ready",status="True"} 1',
    );
    expect(text).toContain('packagesync_drifted_objects{name="we\\"ird\\\\name",namespace="ns"} 3');
    s.forget('ns', 'we"ird\\name');
    const after = s.insertInto('# TYPE packagesync_condition gauge\n# TYPE packagesync_drifted_objects gauge\n');
    expect(after).not.toContain('ird');
    expect(after.split('\n').filter((l) => l.startsWith('packagesync_condition{'))).toHaveLength(9);
  });
});
