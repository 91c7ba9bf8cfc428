import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { notifyMetrics } from './notify-metrics.ts';

describe('notification metrics', () => {
  it('count results by provider and read queue depth and the oldest age at scrape time', async () => {
    const registry = new Registry();
    let stats = { depth: 0, oldestSeconds: 0 };
    const m = notifyMetrics(registry, () => stats);
    m.onResult('slack', 'delivered');
    m.onResult('slack', 'delivered');
    m.onResult('generic', 'retried');
    stats = { depth: 3, oldestSeconds: 42.5 };
    const text = await registry.metrics();
    expect(text).toContain('packagesync_notifications_total{provider="slack",result="delivered"} 2');
    expect(text).toContain('packagesync_notifications_total{provider="generic",result="retried"} 1');
    expect(text).toContain('packagesync_notifications_queue_depth 3');
    expect(text).toContain('packagesync_notifications_oldest_undelivered_seconds 42.5');
  });
});
