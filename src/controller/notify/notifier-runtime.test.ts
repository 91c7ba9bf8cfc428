/**
 * A Notifier at work against a loopback HTTPS receiver: CloudEvents signed and in order, retries with back-off and
 * Retry-After, a rate limit, refusals, a restart mid-delivery (delivered once it is back), and commit statuses
 * checked against each forge's documented API. The state store is a map (the ConfigMap store is e2e's).
 */
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { Notifier, NotifierSpecInput } from '../../api/notifier.ts';
import { NotifierSpecSchema } from '../../api/notifier.ts';
import type { PackageSync, Status } from '../../api/packagesync.ts';
import { Sender } from '../../adapters/notify/sender.ts';
import {
  startNotifyReceiver,
  type NotifyReceiver,
  type ReceivedRequest,
} from '../../../test/support/notify-receiver.ts';
import { NotifierRuntime, type DeliveryResult, type StateStore } from './notifier-runtime.ts';

const SHA1 = '1'.repeat(40);
const SHA2 = '2'.repeat(40);
const T = '2026-11-27T10:00:00Z';
const KEY = 'hmac-test-key-0123456789';
const cond = (status: 'True' | 'False' | 'Unknown', reason: string) => ({
  type: 'Ready',
  status,
  reason,
  message: reason,
  lastTransitionTime: T,
});
const progressing = (sha: string): Status => ({
  lastAttemptedRevision: `main@sha1:${sha}`,
  conditions: [cond('Unknown', 'Progressing')],
});
const healthy = (sha: string): Status => ({
  lastAttemptedRevision: `main@sha1:${sha}`,
  lastAppliedRevision: `main@sha1:${sha}`,
  conditions: [cond('True', 'ReconciliationSucceeded')],
});
const failedStatus = (sha: string): Status => ({
  lastAttemptedRevision: `main@sha1:${sha}`,
  conditions: [cond('False', 'HealthCheckFailed')],
});

const ps = (name: string, status?: Status): PackageSync =>
  ({
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: { name, namespace: 'team-a', uid: `uid-${name}` },
    spec: {},
    ...(status ? { status } : {}),
  }) as unknown as PackageSync;

const notifier = (spec: NotifierSpecInput): Notifier => ({
  apiVersion: 'packagesync.io/v1alpha1',
  kind: 'Notifier',
  metadata: { name: 'hooks', namespace: 'team-a', uid: 'n-uid', generation: 1 },
  spec: NotifierSpecSchema.parse(spec),
});

class MemoryStore implements StateStore {
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

let receiver: NotifyReceiver | undefined;
const running: { stop(): void }[] = [];
const senders: Sender[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) r.stop();
  for (const s of senders.splice(0)) await s.close();
  await receiver?.close();
  receiver = undefined;
});

function start(
  spec: NotifierSpecInput,
  opts: { store?: MemoryStore; units?: PackageSync[]; timeoutMs?: number; secret?: Record<string, string> } = {},
) {
  const store = opts.store ?? new MemoryStore();
  const results: DeliveryResult[] = [];
  const conditions: { status: string; reason: string; message: string }[] = [];
  const sender = new Sender({ timeoutMs: opts.timeoutMs ?? 5_000 });
  senders.push(sender);
  const runtime = new NotifierRuntime(notifier(spec), {
    store,
    sender,
    readSecret: async () => opts.secret ?? { token: KEY, 'ca.crt': receiver!.ca },
    packageSyncs: () => opts.units ?? [],
    setCondition: async (_n, c) => void conditions.push(c),
    onResult: (_p, r) => void results.push(r),
    log: pino({ level: 'silent' }),
    allowHttp: false,
    now: Date.now,
    random: () => 0,
  });
  running.push(runtime);
  return { runtime, store, results, conditions };
}

async function until<T>(what: string, f: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ids = (reqs: ReceivedRequest[]) => reqs.map((r) => r.json.id);

describe('a generic webhook Notifier', () => {
  it('sends each record phase once, as signed CloudEvents, in order, and empties its outbox', async () => {
    receiver = await startNotifyReceiver({ hmacKey: KEY });
    const { runtime, store, results } = start({
      type: 'generic',
      address: `${receiver.url}/in`,
      secretRef: { name: 's' },
    });
    runtime.packageSync(ps('web', progressing(SHA1)));
    runtime.packageSync(ps('web', healthy(SHA1)));
    runtime.packageSync(ps('web', healthy(SHA1)));
    await until('two deliveries', () => results.filter((r) => r === 'delivered').length === 2);
    expect(receiver.requests.map((r) => r.json.type)).toEqual([
      'io.packagesync.deployment.started',
      'io.packagesync.deployment.healthy',
    ]);
    expect(receiver.requests.every((r) => r.signatureValid)).toBe(true);
    expect(
      receiver.requests.every(
        (r) => r.path === '/in' && r.headers['content-type'] === 'application/cloudevents+json; charset=utf-8',
      ),
    ).toBe(true);
    expect(JSON.parse(store.text!).outbox).toEqual([]);
    expect(runtime.stats.depth).toBe(0);
  });

  it('retries a 500 with back-off and keeps the order: nothing overtakes the message being retried', async () => {
    receiver = await startNotifyReceiver({ hmacKey: KEY });
    let failures = 2;
    receiver.answer = () => (failures-- > 0 ? { status: 500 } : { status: 202 });
    const { runtime, results } = start({ type: 'generic', address: receiver.url, secretRef: { name: 's' } });
    runtime.packageSync(ps('a', progressing(SHA1)));
    runtime.packageSync(ps('b', progressing(SHA1)));
    runtime.packageSync(ps('a', healthy(SHA1)));
    await until('three deliveries', () => results.filter((r) => r === 'delivered').length === 3);
    const sent = ids(receiver.requests);
    expect(sent).toEqual([sent[0], sent[0], sent[0], `uid-b/main@sha1:${SHA1}#1`, `uid-a/main@sha1:${SHA1}#2`]);
    expect(results.filter((r) => r === 'retried')).toHaveLength(2);
    // back-off: at least 0.8 s, then 1.6 s (jitter 0 here) between the attempts
    const at = receiver.requests.map((r) => r.at);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(750);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(1550);
  });

  it('honours Retry-After on 429', async () => {
    receiver = await startNotifyReceiver({ hmacKey: KEY });
    let first = true;
    receiver.answer = () =>
      first ? ((first = false), { status: 429, headers: { 'retry-after': '2' } }) : { status: 200 };
    const { runtime, results } = start({ type: 'generic', address: receiver.url, secretRef: { name: 's' } });
    runtime.packageSync(ps('a', failedStatus(SHA1)));
    await until('delivered', () => results.includes('delivered'));
    expect(receiver.requests[1]!.at - receiver.requests[0]!.at).toBeGreaterThanOrEqual(1950);
  });

  it('drops a message the receiver refuses for good (404) and goes on with the next', async () => {
    receiver = await startNotifyReceiver({ hmacKey: KEY });
    receiver.answer = (r) => (r.json.type.endsWith('started') ? { status: 404 } : { status: 200 });
    const { runtime, results } = start({ type: 'generic', address: receiver.url, secretRef: { name: 's' } });
    runtime.packageSync(ps('a', progressing(SHA1)));
    runtime.packageSync(ps('a', healthy(SHA1)));
    await until('delivered', () => results.includes('delivered'));
    expect(results).toEqual(['rejected', 'delivered']);
    expect(receiver.requests).toHaveLength(2);
  });

  it('a restart mid-delivery (the answer lost) sends the message again with the same id: one 2xx per id', async () => {
    receiver = await startNotifyReceiver({ hmacKey: KEY });
    receiver.answer = () => 'hang';
    const store = new MemoryStore();
    const first = start({ type: 'generic', address: receiver.url, secretRef: { name: 's' } }, { store });
    first.runtime.packageSync(ps('a', failedStatus(SHA1)));
    await until('the first attempt in flight', () => receiver!.requests.length === 1);
    first.runtime.stop(); // the process dies: what it wrote to the store is all that is left
    receiver.release(true);
    receiver.answer = () => ({ status: 200 });
    // the new leader sees the same status: the record is in the store, nothing new to record
    const second = start(
      { type: 'generic', address: receiver.url, secretRef: { name: 's' } },
      { store, units: [ps('a', failedStatus(SHA1))] },
    );
    await until('delivered after the restart', () => second.results.includes('delivered'));
    const answered = receiver.requests.filter((r) => r.answered === 200);
    expect(answered).toHaveLength(1);
    expect(new Set(ids(receiver.requests))).toEqual(new Set([`uid-a/main@sha1:${SHA1}#1`]));
  });

  it('a receiver that hangs is given up on after the timeout and retried', async () => {
    receiver = await startNotifyReceiver({ hmacKey: KEY });
    let hang = true;
    receiver.answer = () => (hang ? ((hang = false), 'hang') : { status: 200 });
    const { runtime, results } = start(
      { type: 'generic', address: receiver.url, secretRef: { name: 's' } },
      { timeoutMs: 300 },
    );
    runtime.packageSync(ps('a', failedStatus(SHA1)));
    await until('delivered', () => results.includes('delivered'));
    expect(results).toEqual(['retried', 'delivered']);
  });

  it('says what is wrong with its configuration and sends nothing until it is fixed', async () => {
    receiver = await startNotifyReceiver();
    const { runtime, conditions } = start({ type: 'generic', address: 'http://127.0.0.1:1/x' }, { secret: {} });
    runtime.packageSync(ps('a', failedStatus(SHA1)));
    await until('a condition', () => conditions.length > 0);
    await until('the message kept', () => runtime.stats.depth === 1);
    expect(conditions[0]).toEqual({
      status: 'False',
      reason: 'InvalidSpec',
      message: 'spec.address must be an https:// URL',
    });
  });
});

describe('a Slack Notifier', () => {
  it('is rate limited to one message a second and sends failures once, then resolved', async () => {
    receiver = await startNotifyReceiver();
    const { runtime, results } = start(
      { type: 'slack', secretRef: { name: 's' } },
      { secret: { address: `${receiver.url}/services/T/B/X`, 'ca.crt': receiver.ca } },
    );
    runtime.packageSync(ps('a', healthy(SHA1)));
    runtime.packageSync(ps('a', progressing(SHA2)));
    runtime.packageSync(ps('a', failedStatus(SHA2)));
    runtime.packageSync(ps('a', progressing(SHA2)));
    runtime.packageSync(ps('a', failedStatus(SHA2)));
    runtime.packageSync(ps('b', failedStatus(SHA1)));
    runtime.packageSync(ps('a', healthy(SHA2)));
    await until('three deliveries', () => results.filter((r) => r === 'delivered').length === 3);
    expect(receiver.requests.map((r) => r.json.text.split(':')[0])).toEqual([
      'team-a/a failed',
      'team-a/b failed',
      'team-a/a resolved',
    ]);
    const at = receiver.requests.map((r) => r.at);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(900);
  });
});

/**
 * A forge that checks each request against its documented API (paths, headers, JSON fields, states) and answers
 * 201 only to a conforming one, 422 otherwise, as the forges do.
 */
const FORGES = {
  gitea: {
    path: new RegExp(`^/api/v1/repos/org/repo/statuses/[0-9a-f]{40}$`),
    auth: (h: ReceivedRequest['headers']) => h.authorization === 'token forge-token-123456',
    states: ['pending', 'success', 'error', 'failure', 'warning'],
    fields: ['state', 'context', 'description', 'target_url'],
  },
  github: {
    path: new RegExp(`^/api/v3/repos/org/repo/statuses/[0-9a-f]{40}$`),
    auth: (h: ReceivedRequest['headers']) =>
      h.authorization === 'Bearer forge-token-123456' &&
      h.accept === 'application/vnd.github+json' &&
      !!h['user-agent'],
    states: ['error', 'failure', 'pending', 'success'],
    fields: ['state', 'context', 'description', 'target_url'],
  },
  gitlab: {
    path: new RegExp(`^/api/v4/projects/org%2Frepo/statuses/[0-9a-f]{40}$`),
    auth: (h: ReceivedRequest['headers']) => h['private-token'] === 'forge-token-123456',
    states: ['pending', 'running', 'success', 'failed', 'canceled'],
    fields: ['state', 'name', 'description', 'target_url'],
  },
} as const;

describe('commit status Notifiers against each forge’s documented API', () => {
  for (const [type, api] of Object.entries(FORGES)) {
    it(`${type}: pending then success on the revision's commit, every request conforming`, async () => {
      receiver = await startNotifyReceiver();
      const problems: string[] = [];
      receiver.answer = (r) => {
        const why = [
          r.method !== 'POST' && 'method',
          !api.path.test(r.path) && `path ${r.path}`,
          !api.auth(r.headers) && 'auth headers',
          !String(r.headers['content-type']).startsWith('application/json') && 'content-type',
          !(api.states as readonly string[]).includes(r.json.state) && `state ${r.json.state}`,
          Object.keys(r.json).some((k) => !(api.fields as readonly string[]).includes(k)) &&
            `fields ${Object.keys(r.json)}`,
        ].filter(Boolean);
        problems.push(...(why as string[]));
        return { status: why.length ? 422 : 201 };
      };
      const { runtime, results } = start(
        {
          type: type as 'gitea',
          address: `${receiver.url}/org/repo.git`,
          secretRef: { name: 's' },
          targetURL: 'https://ui.example/{{ .namespace }}/{{ .name }}',
        },
        { secret: { token: 'forge-token-123456', 'ca.crt': receiver.ca } },
      );
      runtime.packageSync(ps('web', progressing(SHA1)));
      runtime.packageSync(ps('web', healthy(SHA1)));
      await until('two statuses', () => results.filter((r) => r === 'delivered').length === 2);
      expect(problems).toEqual([]);
      expect(receiver.requests.map((r) => r.path.endsWith(SHA1))).toEqual([true, true]);
      expect(receiver.requests.map((r) => r.json.state)).toEqual(['pending', 'success']);
      expect(receiver.requests[1]!.json.target_url).toBe('https://ui.example/team-a/web');
    });
  }
});
