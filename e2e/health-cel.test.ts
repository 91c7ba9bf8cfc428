/**
 * spec.healthCheckExprs on the real control plane: a CEL rule for a custom resource (its CRD shipped in the
 * package) decides whether it is healthy, where kstatus alone would call it Current (no conditions); a
 * `failed` rule ends the wait at once; an expression that does not compile is InvalidSpec and nothing is
 * applied.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles } from '../test/support/git/index.ts';
import { kubectl } from './support/cluster.ts';
import { patchPackageSync, waitCondition } from './support/controller.ts';
import { condition, gadgetCRD, readyAt, stalledOnHealth, watchStatus } from './support/health.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';

let env: GitEnvWithController;
beforeAll(async () => {
  env = await startGitEnv();
});
afterAll(async () => {
  await env?.dispose();
});

/** A Gadget whose only status is a phase: nothing kstatus reads (no conditions, no observedGeneration). */
const gadget = (group: string, phase: string) =>
  `apiVersion: ${group}/v1\nkind: Gadget\nmetadata: {name: g1}\nspec: {size: 1}\nstatus: {phase: ${phase}}\n`;

const rule = (group: string, current = "status.phase == 'Running'") => ({
  apiVersion: `${group}/v1`,
  kind: 'Gadget',
  current,
  failed: "status.phase == 'Broken'",
});

describe('spec.healthCheckExprs', () => {
  it('a CEL rule decides a custom resource failed, then Ready', async () => {
    const ns = await env.namespace('e2e-cel');
    const group = `${ns}.example.com`;
    const { repo, url } = await env.repo('cel', {
      'crd.yaml': gadgetCRD(group),
      'gadget.yaml': gadget(group, 'Broken'),
    });
    await env.sync(ns, 'cel', {
      source: { url },
      timeout: '120s',
      // a custom resource right after its CRD can meet UnknownKind while discovery lags: retry soon
      retryInterval: '1s',
      healthCheckExprs: [rule(group)],
    });
    const { last } = await watchStatus(ns, 'cel', stalledOnHealth, 100_000);
    // the failed rule ended the wait, not the timeout: the message names the rule
    expect(condition(last, 'Ready')?.message).toContain(
      `Gadget.${group}/${ns}/g1 (healthCheckExprs Gadget.${group} failed: "status.phase == 'Broken'" is true)`,
    );
    expect(last.status?.cause?.[0]).toMatchObject({
      kind: `Gadget.${group}`,
      name: 'g1',
      reason: 'HealthCheckExprFailed',
    });

    const fixed = await commitFiles(repo, 'main', { 'gadget.yaml': gadget(group, 'Running') }, 'running');
    await patchPackageSync(ns, 'cel', {
      metadata: { annotations: { 'packagesync.io/reconcile-requested-at': fixed } },
    });
    const { last: ready } = await watchStatus(ns, 'cel', readyAt(fixed), 100_000);
    expect(ready.status?.objects).toMatchObject({ total: 2, current: 2 });

    await patchPackageSync(ns, 'cel', { spec: { suspend: true } });
    await kubectl('delete', 'crd', `gadgets.${group}`, '--wait=false');
  });

  it('an expression that does not compile is InvalidSpec naming kind and expression; nothing is applied', async () => {
    const ns = await env.namespace('e2e-cel-bad');
    const group = `${ns}.example.com`;
    const { url } = await env.repo('cel-bad', {
      'crd.yaml': gadgetCRD(group),
      'gadget.yaml': gadget(group, 'Running'),
    });
    await env.sync(ns, 'bad', {
      source: { url },
      healthCheckExprs: [rule(group, "status.phase == 'Running'")].map((r) => ({ ...r, failed: 'status.phase ==' })),
    });
    const failed = await waitCondition(ns, 'bad', 'Ready', 'False', 'InvalidSpec');
    expect(condition(failed, 'Ready')?.message).toMatch(
      new RegExp(
        `^spec\\.healthCheckExprs\\[0\\] \\(Gadget\\.${group.replace(/\./g, '\\.')}\\) failed: "status\\.phase ==" is not valid CEL: `,
      ),
    );
    expect(condition(failed, 'Stalled')?.status).toBe('True');
    expect(failed.status?.inventory).toBeUndefined();
    expect(await kubectl('get', 'crd', '-o', 'name')).not.toContain(`gadgets.${group}`);
  });
});
