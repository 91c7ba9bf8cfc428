/**
 * A reconcile waiting for health gives its worker back (docs/adr/0030), on the real control plane: with one
 * worker (`--concurrency 1`), a package whose custom resource stays not Ready for minutes does not hold up the
 * package behind it, and still ends with its own timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conditionOf } from '../src/core/status.ts';
import { eventually, kubectl } from './support/cluster.ts';
import { getPackageSync, patchPackageSync } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { gadgetCRD, notReadyGadget } from './support/health.ts';

let env: GitEnvWithController;

beforeAll(async () => {
  env = await startGitEnv({ args: ['--concurrency', '1'] });
}, 600_000);
afterAll(async () => {
  await env?.dispose();
});

describe('a reconcile waiting for health', () => {
  it('does not hold the only worker: the next package is applied meanwhile', async () => {
    const ns = await env.namespace('e2e-wait-slot');
    const group = `${ns}.example.com`;
    const slow = await env.repo('wait-slow', {
      'crd.yaml': gadgetCRD(group),
      'gadget.yaml': notReadyGadget(group, 'g1', 'still starting'),
    });
    // retryInterval: a custom resource applied right after its CRD can meet UnknownKind once (discovery lag)
    await env.sync(ns, 'slow', { source: { url: slow.url }, timeout: '60s', retryInterval: '1s' });
    await eventually(
      'slow: waiting for health',
      async () =>
        (conditionOf((await getPackageSync(ns, 'slow'))?.status, 'Reconciling')?.message ?? '').includes(
          'waiting for health',
        ),
      { timeoutMs: 60_000 },
    );

    const quick = await env.repo('wait-quick', {
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: quick}\ndata: {a: "1"}\n',
    });
    await env.sync(ns, 'quick', { source: { url: quick.url }, targetNamespace: ns });
    await eventually(
      'quick: Ready while slow still waits',
      async () => conditionOf((await getPackageSync(ns, 'quick'))?.status, 'Ready')?.status === 'True',
      { timeoutMs: 40_000 },
    );
    const waiting = conditionOf((await getPackageSync(ns, 'slow'))?.status, 'Reconciling');
    expect(waiting?.status).toBe('True');
    expect(waiting?.message).toContain('waiting for health');

    // the waiting reconcile still ends as it would have: its timeout names the Gadget
    await eventually(
      'slow: Ready=False at its timeout',
      async () => {
        const ready = conditionOf((await getPackageSync(ns, 'slow'))?.status, 'Ready');
        return ready?.status === 'False' && (ready.message ?? '').includes('g1');
      },
      { timeoutMs: 120_000 },
    );
    await patchPackageSync(ns, 'slow', { spec: { suspend: true } });
    await kubectl('delete', 'crd', `gadgets.${group}`, '--wait=false');
  });
});
