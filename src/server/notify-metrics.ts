/**
 * Notification metrics (docs/adr/0040), on the controller's registry: every delivery outcome by provider, the
 * messages waiting in the outboxes and the age of the oldest (a receiver that stopped answering shows here first).
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export const NOTIFICATION_RESULTS = ['delivered', 'retried', 'rejected', 'dropped', 'expired', 'skipped'] as const;

export interface NotifyMetrics {
  onResult(provider: string, result: string): void;
}

export function notifyMetrics(
  registry: Registry,
  stats: () => { depth: number; oldestSeconds: number },
): NotifyMetrics {
  const registers = [registry];
  const total = new Counter({
    name: 'packagesync_notifications_total',
    help: 'Notification deliveries by provider and result: delivered, retried (an attempt failed, it is tried again), rejected (refused for good), dropped (outbox full), expired (not delivered in a day), skipped (nothing to send, e.g. no commit).',
    labelNames: ['provider', 'result'] as const,
    registers,
  });
  new Gauge({
    name: 'packagesync_notifications_queue_depth',
    help: 'Messages in the Notifiers’ outboxes, not delivered yet.',
    registers,
    collect() {
      this.set(stats().depth);
    },
  });
  new Gauge({
    name: 'packagesync_notifications_oldest_undelivered_seconds',
    help: 'Age of the oldest message not delivered yet (0 when every outbox is empty).',
    registers,
    collect() {
      this.set(stats().oldestSeconds);
    },
  });
  return { onResult: (provider, result) => total.inc({ provider, result }) };
}
