import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { PeakFootprint, servedByAnother, treeMemoryOf } from '../../bench/lib/procs.ts';

describe('servedByAnother: the process answering /metrics is the one just launched', () => {
  const launchedAt = Date.parse('2026-11-25T06:24:31Z');
  const started = (iso: string) =>
    `# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds ${Date.parse(iso) / 1000}\n`;

  it('a process started with the launch is ours; one started minutes before holds the port', () => {
    expect(servedByAnother(started('2026-11-25T06:24:32Z'), launchedAt)).toBe(false);
    expect(servedByAnother(started('2026-11-25T06:16:00Z'), launchedAt)).toBe(true);
  });

  it('cannot tell without the metric', () => {
    expect(servedByAnother('up 1\n', launchedAt)).toBeUndefined();
  });
});

describe('treeMemoryOf: the PackageSync controller with its render workers', () => {
  it('counts every descendant by name beside the process itself', async () => {
    // a child and a grandchild, as the controller starts workers (through a launcher when sandboxed)
    const child = spawn('sh', ['-c', 'sleep 30 & wait'], { stdio: 'ignore' });
    try {
      const tree = await (async () => {
        for (let i = 0; i < 50; i++) {
          const t = treeMemoryOf(process.pid);
          if (t.sleep !== undefined) return t;
          await new Promise((r) => setTimeout(r, 100));
        }
        return treeMemoryOf(process.pid);
      })();
      expect(Object.keys(tree)).toEqual(expect.arrayContaining(['controller', 'sh', 'sleep']));
      for (const mib of Object.values(tree)) expect(mib).toBeGreaterThan(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('PeakFootprint: the tool’s memory with shared pages counted once', () => {
  it('samples the trees under their names and keeps the highest sum', async () => {
    const child = spawn('sh', ['-c', 'sleep 30 & sleep 30 & wait'], { stdio: 'ignore' });
    try {
      // both sleeps started (as treeMemoryOf sees them), then sampled a few times
      for (let i = 0; i < 50 && !(Number(treeMemoryOf(child.pid!).sleep) > 0); i++)
        await new Promise((r) => setTimeout(r, 100));
      const sampler = new PeakFootprint(() => [{ name: 'tool', pid: child.pid! }], 50);
      await new Promise((r) => setTimeout(r, 400));
      const peak = sampler.stop();
      expect(Object.keys(peak.perProcessMiB).sort()).toEqual(['sleep', 'tool']);
      // the two sleeps map one binary: its pages count once, so the two are below the sum of their RSS
      expect(peak.perProcessMiB.sleep!).toBeLessThan(treeMemoryOf(child.pid!).sleep!);
      expect(peak.peakMiB).toBeCloseTo(peak.perProcessMiB.tool! + peak.perProcessMiB.sleep!, 5);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
