/**
 * A NotifierRuntime wired for tests against a loopback HTTPS receiver (notify-receiver.ts): PackageSync and
 * Notifier objects as plain data, a map as the state store, a runtime started and stopped per test.
 */
import pino from 'pino';
import type { Notifier, NotifierSpecInput } from '../../src/api/notifier.ts';
import { NotifierSpecSchema } from '../../src/api/notifier.ts';
import type { PackageSync, Status } from '../../src/api/packagesync.ts';
import { Sender } from '../../src/adapters/notify/sender.ts';
import type { NotifyReceiver, ReceivedRequest } from './notify-receiver.ts';
import {
  NotifierRuntime,
  type DeliveryResult,
  type RuntimeDeps,
  type StateStore,
} from '../../src/controller/notify/notifier-runtime.ts';

export const SHA1 = '1'.repeat(40);
export const SHA2 = '2'.repeat(40);
export const T = '2026-11-27T10:00:00Z';
export const KEY = 'hmac-test-key-0123456789';
export const cond = (status: 'True' | 'False' | 'Unknown', reason: string) => ({
  type: 'Ready',
  status,
  reason,
  message: reason,
  lastTransitionTime: T,
});
export const progressing = (sha: string): Status => ({
  lastAttemptedRevision: `main@sha1:${sha}`,
  conditions: [cond('Unknown', 'Progressing')],
});
export const healthy = (sha: string): Status => ({
  lastAttemptedRevision: `main@sha1:${sha}`,
  lastAppliedRevision: `main@sha1:${sha}`,
  conditions: [cond('True', 'ReconciliationSucceeded')],
});
export const failedStatus = (sha: string): Status => ({
  lastAttemptedRevision: `main@sha1:${sha}`,
  conditions: [cond('False', 'HealthCheckFailed')],
});

export const ps = (name: string, status?: Status): PackageSync =>
  ({
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: { name, namespace: 'team-a', uid: `uid-${name}` },
    spec: {},
    ...(status ? { status } : {}),
  }) as unknown as PackageSync;

export const notifier = (spec: NotifierSpecInput): Notifier => ({
  apiVersion: 'packagesync.io/v1alpha1',
  kind: 'Notifier',
  metadata: { name: 'hooks', namespace: 'team-a', uid: 'n-uid', generation: 1 },
  spec: NotifierSpecSchema.parse(spec),
});

export class MemoryStore implements StateStore {
  text: string | undefined;
  writes = 0;
  async load() {
    return this.text;
  }
  async save(_ref: unknown, text: string) {
    this.writes++;
    this.text = text;
  }
}

/** The receiver of the test that runs; `stopAll` closes it. */
export const current: { receiver: NotifyReceiver | undefined } = { receiver: undefined };
const running: { stop(): void }[] = [];
const senders: Sender[] = [];
/** For afterEach: stops every runtime, sender and the receiver. */
export async function stopAll(): Promise<void> {
  for (const r of running.splice(0)) r.stop();
  for (const s of senders.splice(0)) await s.close();
  await current.receiver?.close();
  current.receiver = undefined;
}

export function start(
  spec: NotifierSpecInput,
  opts: {
    store?: MemoryStore;
    units?: PackageSync[];
    timeoutMs?: number;
    secret?: Record<string, string>;
    plans?: RuntimeDeps['plans'];
  } = {},
) {
  const store = opts.store ?? new MemoryStore();
  const results: DeliveryResult[] = [];
  const conditions: { status: string; reason: string; message: string }[] = [];
  const sender = new Sender({ timeoutMs: opts.timeoutMs ?? 5_000 });
  senders.push(sender);
  const runtime = new NotifierRuntime(notifier(spec), {
    store,
    sender,
    readSecret: async () => opts.secret ?? { token: KEY, 'ca.crt': current.receiver!.ca },
    packageSyncs: () => opts.units ?? [],
    setCondition: async (_n, c) => void conditions.push(c),
    onResult: (_p, r) => void results.push(r),
    log: pino({ level: 'silent' }),
    allowHttp: false,
    now: Date.now,
    random: () => 0,
    ...(opts.plans ? { plans: opts.plans } : {}),
  });
  running.push(runtime);
  return { runtime, store, results, conditions };
}

export async function until<T>(what: string, f: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const ids = (reqs: ReceivedRequest[]) => reqs.map((r) => r.json.id);
