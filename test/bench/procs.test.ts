import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { servedByAnother, treeMemoryOf } from '../../bench/lib/procs.ts';

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
