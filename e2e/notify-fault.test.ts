/**
 * The fault the issue names (docs/adr/0040 §3–4): the receiver down for 2 minutes while revisions land, then the
 * controller SIGKILLed while a delivery is in flight. After recovery every message of every record reaches the
 * receiver exactly once by its dedup key (the CloudEvent id), in order per PackageSync. A real controller process,
 * the real control plane, a loopback HTTPS receiver that verifies every signature.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/cluster.ts';
import { getPackageSync, waitReady } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { notifiedNamespace, readOutbox } from './support/notifier.ts';
import { trigger } from './support/safety.ts';
import { startNotifyReceiver, type NotifyReceiver, type ReceivedRequest } from '../test/support/notify-receiver.ts';

const KEY = 'e2e-notify-fault-hmac-key-0002';
const OUTAGE_MS = 120_000;
let env: GitEnvWithController;
let receiver: NotifyReceiver;

beforeAll(async () => {
  env = await startGitEnv();
  receiver = await startNotifyReceiver({ hmacKey: KEY });
});
afterAll(async () => {
  await env?.dispose();
  await receiver?.close();
});

/** `<uid>/<revision>#<seq>`: seq counts this PackageSync's messages for this Notifier, across revisions. */
const seqOf = (id: string) => Number(id.slice(id.lastIndexOf('#') + 1));
const kindOf = (r: ReceivedRequest) => String(r.json.type).replace('io.packagesync.deployment.', '');

describe('delivery through a receiver outage and a controller crash', () => {
  it('receiver down 2 minutes, controller SIGKILLed mid-delivery: every record delivered exactly once, in order', async () => {
    const ns = await notifiedNamespace(env, receiver, 'e2e-notify-fault', KEY);
    const to = () => receiver.requests.filter((r) => r.path === `/${ns}`);
    const { repo, url, sha } = await env.repo('notify-fault', { 'cm.yaml': configMap('a', { v: '1' }) });
    const shas = [sha];
    await env.sync(ns, 'web', { source: { url } });
    await waitReady(ns, 'web');
    await eventually('revision 1 healthy delivered', async () =>
      to().some((r) => kindOf(r) === 'healthy' && r.answered === 200),
    );

    // the receiver goes away; two more revisions are deployed meanwhile
    await receiver.down();
    const downAt = Date.now();
    const before = to().length;
    for (const v of ['2', '3']) {
      const next = await env.commit(repo, { 'cm.yaml': configMap('a', { v }) });
      shas.push(next);
      await trigger(ns, 'web');
      await waitReady(ns, 'web', (ps) => ps.status?.lastAppliedRevision === `main@sha1:${next}`);
    }
    // the controller kept trying: the outbox in the cluster holds the undelivered messages, the error says why
    // without the address's secret parts or the key
    const held = await eventually(
      'a failed attempt recorded in the outbox',
      async () => {
        const { state } = await readOutbox(ns);
        return state.outbox.length > 0 && state.outbox[0]!.attempts >= 2 && state;
      },
      { timeoutMs: OUTAGE_MS },
    );
    expect(held.outbox[0]!.lastError).toBeTruthy();
    expect(JSON.stringify(held)).not.toContain(KEY);
    expect(to().length).toBe(before);
    await new Promise((r) => setTimeout(r, Math.max(0, downAt + OUTAGE_MS - Date.now())));

    // back up, but the first delivery hangs: the controller is SIGKILLed while it is in flight
    let hung: ReceivedRequest | undefined;
    receiver.answer = (r) => {
      if (r.path !== `/${ns}` || hung) return { status: 200 };
      hung = r;
      return 'hang';
    };
    await receiver.up();
    // after 2 minutes of refused connections the back-off is 64–128 s (±20 %): the next attempt comes within it
    await eventually('a delivery in flight', async () => hung, { timeoutMs: 170_000 });
    await env.controller.restart();
    receiver.release(true);

    const last = `main@sha1:${shas[2]}`;
    const got = await eventually(
      'revision 3 healthy delivered after the restart',
      async () => to().some((r) => kindOf(r) === 'healthy' && r.json.data.revision === last && r.answered === 200),
      { timeoutMs: 90_000 },
    ).then(() => to());
    expect(got.every((r) => r.signatureValid)).toBe(true);
    expect(got.every((r) => r.json.data.name === 'web')).toBe(true);

    // exactly once: every id the receiver accepted, it accepted once, and the one that hung was sent again
    // under the same id (the receiver's dedup key) and accepted then
    const accepted = got.filter((r) => r.answered === 200);
    const ids = accepted.map((r) => r.json.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(hung!.json.id);
    // in order, none missing: this PackageSync's sequence numbers as they arrived are 1, 2, 3, …
    expect(ids.map(seqOf)).toEqual(ids.map((_, i) => i + 1));
    // one record per revision, each from started to healthy
    for (const s of shas) {
      const ofRevision = accepted.filter((r) => r.json.data.revision === `main@sha1:${s}`).map(kindOf);
      expect(ofRevision[0]).toBe('started');
      expect(ofRevision.at(-1)).toBe('healthy');
    }
    expect(accepted.at(-1)!.json.data.revision).toBe(last);
    const { state } = await readOutbox(ns);
    expect(state.outbox).toEqual([]);
    expect((await getPackageSync(ns, 'web'))?.status?.lastAppliedRevision).toBe(last);
    expect(env.controller.logs.join('\n')).not.toContain(KEY);
  }, 480_000);
});
