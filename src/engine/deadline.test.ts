import { describe, expect, it, vi } from 'vitest';
import { Deadline } from './deadline.ts';

describe('Deadline', () => {
  it('aborts with a TimeoutError after its budget, like AbortSignal.timeout', async () => {
    const d = new Deadline(new AbortController().signal);
    const signal = d.start(10);
    await new Promise((r) => setTimeout(r, 50));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it("aborts with the parent's reason when the parent aborts first, or already has", () => {
    const parent = new AbortController();
    const d = new Deadline(parent.signal);
    const signal = d.start(60_000);
    parent.abort(new Error('shutdown'));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('shutdown');
    d.clear();
    expect(new Deadline(parent.signal).start(60_000).reason).toEqual(new Error('shutdown'));
  });

  it('once cleared, neither the timer nor the parent aborts it', async () => {
    const parent = new AbortController();
    const d = new Deadline(parent.signal);
    const signal = d.start(10);
    d.clear();
    await new Promise((r) => setTimeout(r, 50));
    parent.abort();
    expect(signal.aborted).toBe(false);
  });

  it('tells what is left of the budget: the clock the health wait ends by', () => {
    vi.useFakeTimers();
    try {
      const d = new Deadline(new AbortController().signal);
      d.start(180_000);
      vi.advanceTimersByTime(60_000);
      expect(d.remainingMs()).toBe(120_000);
      vi.advanceTimersByTime(200_000);
      expect(d.remainingMs()).toBe(0);
      d.clear();
    } finally {
      vi.useRealTimers();
    }
  });
});
