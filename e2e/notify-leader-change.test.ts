/**
 * The outbox survives a leader change (docs/adr/0040 §3), with two real controller replicas on one shard and
 * leader election on a Lease. Messages are held in the outbox while the receiver fails them (500, then a hang);
 * the leader goes away twice — SIGKILLed (its Lease taken over once it expired) and stopped with SIGTERM (its
 * Lease handed over) — and each time the new leader delivers every message exactly once by its dedup key (the
 * CloudEvent id), in order per PackageSync. The old leader delivered none of them: it is gone when the receiver
 * starts answering. And a new PackageSync whose record never reached the outbox (its writes refused by an admission
 * policy, then the leader killed) still gets its ending from the next leader.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, kube } from './support/cluster.ts';
import {
  createPackageSync,
  getPackageSync,
  httpBase,
  metricSum,
  packageSync,
  waitReady,
  type ControllerHandle,
} from './support/controller.ts';
import { configMap, quickSpec, startGitEnv, type GitEnv } from './support/git-env.ts';
import { notifiedNamespace, readOutbox } from './support/notifier.ts';
import { trigger } from './support/safety.ts';
import { startNotifyReceiver, type NotifyReceiver, type ReceivedRequest } from '../test/support/notify-receiver.ts';
import type { TestRepo } from '../test/support/git/index.ts';
import { outboxName } from '../src/adapters/kube/notifier-store.ts';

const KEY = 'e2e-notify-leader-hmac-key-0006';
const LEASE_DURATION_MS = 15_000;
const UNITS = ['web', 'api'] as const;
let env: GitEnv;
let receiver: NotifyReceiver;
let args: string[];
let a: ControllerHandle;
let b: ControllerHandle;
/** The replica leading after the second test. */
let leader: ControllerHandle;

const leads = (c: ControllerHandle) => c.logs.some((l) => l.includes('controller started'));
const observedLeader = (c: ControllerHandle) => c.logs.some((l) => l.includes('leader observed'));

beforeAll(async () => {
  env = await startGitEnv(false);
  receiver = await startNotifyReceiver({ hmacKey: KEY });
  const leases = await env.namespace('e2e-notify-lease');
  args = [
    '--leader-elect',
    '--leader-election-namespace',
    leases,
    '--metrics-bind-address',
    '127.0.0.1:0',
    '--health-probe-bind-address',
    '127.0.0.1:0',
  ];
  a = await env.startController({ args });
  await eventually('the first replica leads', async () => leads(a));
  b = await env.startController({ args, shard: a.shard });
  await eventually('the standby observed the leader', async () => observedLeader(b));
});
afterAll(async () => {
  await env?.dispose();
  await receiver?.close();
});

/** `<uid>/<revision>#<seq>`: seq counts one PackageSync's messages for this Notifier, across revisions. */
const seqOf = (id: string) => Number(id.slice(id.lastIndexOf('#') + 1));
const kindOf = (r: ReceivedRequest) => String(r.json.type).replace('io.packagesync.deployment.', '');

describe('the outbox across a leader change', () => {
  let ns: string;
  const repos = new Map<string, TestRepo>();
  const shas = new Map<string, string[]>(UNITS.map((u) => [u, []]));
  const to = () => receiver.requests.filter((r) => r.path === `/${ns}`);
  const accepted = () => to().filter((r) => r.answered === 200);

  /** Commits a new revision of every unit and waits until each is Ready at it. */
  async function deployRevision(v: string): Promise<void> {
    for (const unit of UNITS) {
      const sha = await env.commit(repos.get(unit)!, { 'cm.yaml': configMap(unit, { v }) });
      shas.get(unit)!.push(sha);
      await trigger(ns, unit);
    }
    for (const unit of UNITS) {
      const sha = shas.get(unit)!.at(-1)!;
      await waitReady(ns, unit, (ps) => ps.status?.lastAppliedRevision === `main@sha1:${sha}`);
    }
  }

  /** Every unit's last revision has its healthy message waiting in the outbox, the head tried `attempts` times. */
  const heldInOutbox = (attempts: number) =>
    eventually('the records held in the outbox', async () => {
      const { state } = await readOutbox(ns);
      const held = UNITS.every((u) =>
        state.outbox.some(
          (e) => e.msg.name === u && e.msg.kind === 'healthy' && e.msg.revision.endsWith(shas.get(u)!.at(-1)!),
        ),
      );
      return held && state.outbox[0]!.attempts >= attempts && state;
    });

  /** Every revision of every unit delivered: accepted once each, this PackageSync's seq 1, 2, 3, … in order. */
  function expectEveryRecordOnce(): void {
    const got = accepted();
    expect(got.every((r) => r.signatureValid)).toBe(true);
    const ids = got.map((r) => r.json.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const unit of UNITS) {
      const mine = got.filter((r) => r.json.data.name === unit);
      expect(mine.map((r) => seqOf(r.json.id))).toEqual(mine.map((_, i) => i + 1));
      for (const sha of shas.get(unit)!) {
        const kinds = mine.filter((r) => r.json.data.revision === `main@sha1:${sha}`).map(kindOf);
        expect(kinds[0]).toBe('started');
        expect(kinds.at(-1)).toBe('healthy');
        expect(kinds.filter((k) => k === 'healthy')).toHaveLength(1);
      }
    }
  }

  const allHealthyAccepted = () =>
    UNITS.every((u) =>
      accepted().some(
        (r) =>
          r.json.data.name === u &&
          kindOf(r) === 'healthy' &&
          r.json.data.revision === `main@sha1:${shas.get(u)!.at(-1)!}`,
      ),
    );

  it('the leader SIGKILLed while the receiver fails every message: the next leader delivers each once, in order', async () => {
    ns = await notifiedNamespace(
      { namespace: (p) => env.namespace(p), controller: a },
      receiver,
      'e2e-notify-lead',
      KEY,
    );
    // the receiver fails everything for this namespace: the outbox holds every message of two revisions
    receiver.answer = (r) => (r.path === `/${ns}` ? { status: 500 } : { status: 200 });
    for (const unit of UNITS) {
      const { repo, url, sha } = await env.repo(`notify-lead-${unit}`, { 'cm.yaml': configMap(unit, { v: '1' }) });
      repos.set(unit, repo);
      shas.get(unit)!.push(sha);
      await createPackageSync(packageSync(ns, unit, a.shard, quickSpec(url)));
    }
    for (const unit of UNITS) await waitReady(ns, unit);
    await deployRevision('2');
    const held = await heldInOutbox(2);
    expect(held.outbox[0]!.lastError).toBeTruthy();
    expect(accepted()).toEqual([]);
    // the leader's own metrics say what waits and for how long
    const aBase = await httpBase(a);
    expect(await metricSum(aBase, 'packagesync_notifications_queue_depth')).toBeGreaterThanOrEqual(held.outbox.length);
    expect(await metricSum(aBase, 'packagesync_notifications_oldest_undelivered_seconds')).toBeGreaterThan(0);
    expect(
      await metricSum(aBase, 'packagesync_notifications_total', { provider: 'generic', result: 'retried' }),
    ).toBeGreaterThanOrEqual(2);

    // the leader dies without releasing its Lease; only then does the receiver answer
    await a.stop('SIGKILL');
    receiver.answer = () => ({ status: 200 });
    await eventually('the standby leads', async () => leads(b), { timeoutMs: LEASE_DURATION_MS + 30_000 });
    await eventually('every record delivered by the new leader', async () => allHealthyAccepted(), {
      timeoutMs: 120_000,
    });
    await eventually('the outbox emptied', async () => (await readOutbox(ns)).state.outbox.length === 0);
    expectEveryRecordOnce();
    // the new leader counted each of them delivered (counted just after the outbox write that removes it)
    const bBase = await httpBase(b);
    const delivered = () =>
      metricSum(bBase, 'packagesync_notifications_total', { provider: 'generic', result: 'delivered' });
    await eventually('the deliveries counted', async () => (await delivered()) === accepted().length);
    expect(await metricSum(bBase, 'packagesync_notifications_queue_depth')).toBe(0);
  }, 300_000);

  it('the leader stopped (its Lease handed over) while a delivery hangs: the next leader delivers each once, in order', async () => {
    // a third replica stands by for the current leader
    const c = await env.startController({ args, shard: a.shard });
    await eventually('the new standby observed the leader', async () => observedLeader(c));
    // the next delivery hangs; every one after it fails, so the outbox holds this revision's messages
    let hung: ReceivedRequest | undefined;
    receiver.answer = (r) => {
      if (r.path !== `/${ns}`) return { status: 200 };
      if (hung) return { status: 500 };
      hung = r;
      return 'hang';
    };
    const before = accepted().length;
    await deployRevision('3');
    await eventually('a delivery in flight', async () => hung);
    await heldInOutbox(0);

    // SIGTERM: the leader finishes, stops its Notifiers and releases the Lease; the standby takes it over
    await b.stop();
    expect(b.logs.some((l) => l.includes('leader lease released'))).toBe(true);
    receiver.release(true);
    receiver.answer = () => ({ status: 200 });
    await eventually('the standby leads', async () => leads(c), { timeoutMs: LEASE_DURATION_MS + 30_000 });
    await eventually('revision 3 delivered by the new leader', async () => allHealthyAccepted(), {
      timeoutMs: 120_000,
    });
    await eventually('the outbox emptied', async () => (await readOutbox(ns)).state.outbox.length === 0);
    expect(accepted().length).toBeGreaterThan(before);
    // the message that hung was sent again under its own id, and accepted then
    expect(accepted().map((r) => r.json.id)).toContain(hung!.json.id);
    expectEveryRecordOnce();
    for (const h of [a, b, c]) expect(h.logs.join('\n')).not.toContain(KEY);
    leader = c;
  }, 300_000);

  it("a new PackageSync's record the dead leader never wrote down: the next leader still sends its ending", async () => {
    const d = await env.startController({ args, shard: a.shard });
    await eventually('the new standby observed the leader', async () => observedLeader(d));
    receiver.answer = (r) => (r.path === `/${ns}` ? { status: 500 } : { status: 200 });
    const { url, sha } = await env.repo('notify-lead-db', { 'cm.yaml': configMap('db', { v: '1' }) });
    const client = await kube();
    const policy = `${ns}-outbox-refused`;
    const admission = '/apis/admissionregistration.k8s.io/v1';
    try {
      // the leader's writes to the outbox are refused from now on: what it records stays in its memory
      await client.request('POST', `${admission}/validatingadmissionpolicies`, {
        body: {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicy',
          metadata: { name: policy },
          spec: {
            failurePolicy: 'Fail',
            matchConstraints: {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
              resourceRules: [
                { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] },
              ],
            },
            matchConditions: [{ name: 'outbox', expression: `object.metadata.name == '${outboxName('hook')}'` }],
            validations: [{ expression: 'false', message: 'outbox writes refused by the test' }],
          },
        },
      });
      await client.request('POST', `${admission}/validatingadmissionpolicybindings`, {
        body: {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingAdmissionPolicyBinding',
          metadata: { name: policy },
          spec: { policyName: policy, validationActions: ['Deny'] },
        },
      });
      const path = `/api/v1/namespaces/${ns}/configmaps/${outboxName('hook')}`;
      await eventually('the outbox refused', async () => {
        const cm = await client.request<Record<string, unknown>>('GET', path);
        return client.request('PUT', path, { body: cm, query: { dryRun: 'All' } }).then(
          () => false,
          (e: unknown) => String(e).includes('outbox writes refused'),
        );
      });

      const refusals = () => leader.logs.filter((l) => l.includes('could not write the outbox')).length;
      const before = refusals();
      await createPackageSync(packageSync(ns, 'db', a.shard, quickSpec(url)));
      await waitReady(ns, 'db');
      await eventually('the leader failed to write its outbox', async () => refusals() > before);
      await leader.stop('SIGKILL');
    } finally {
      await client.request('DELETE', `${admission}/validatingadmissionpolicybindings/${policy}`).catch(() => undefined);
      await client.request('DELETE', `${admission}/validatingadmissionpolicies/${policy}`).catch(() => undefined);
    }
    receiver.answer = () => ({ status: 200 });
    await eventually('the standby leads', async () => leads(d), { timeoutMs: LEASE_DURATION_MS + 30_000 });
    const uid = (await getPackageSync(ns, 'db'))!.metadata.uid;
    const ofDb = await eventually(
      "db's ending delivered by the new leader",
      async () => {
        const got = accepted().filter((r) => r.json.data.name === 'db');
        return got.length > 0 && got;
      },
      { timeoutMs: 90_000 },
    );
    // its started and applied were only ever in the dead leader's memory; its ending is the record's news (the
    // new leader found it healthy, with nothing in the outbox: before the fix it took that for "nothing happened")
    expect(ofDb.map((r) => [kindOf(r), r.json.id])).toEqual([['healthy', `${uid}/main@sha1:${sha}#1`]]);
    await eventually('the outbox emptied', async () => (await readOutbox(ns)).state.outbox.length === 0);
    expect(accepted().filter((r) => r.json.data.name === 'db')).toHaveLength(1);
    expect(accepted().every((r) => r.signatureValid)).toBe(true);
  }, 300_000);
});
