import { describe, expect, it } from 'vitest';
import { servedByAnother } from '../../bench/lib/procs.ts';

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
