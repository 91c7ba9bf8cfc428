/**
 * `packagesync why` follows a dependsOn into the dependency's own chain, to the first real cause, each link
 * with its message (issue 26): a render failure in a dependency (file:line printed), a dependency's Deployment
 * whose Pod cannot pull its image (kwok's failure stage, hack/kwok-stages), and a dependsOn cycle that ends the
 * chain with a line naming it. Text and `-o json`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packagesync } from './support/cli.ts';
import { eventually } from './support/cluster.ts';
import { waitCondition } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { configMap, deployment } from './support/health.ts';

let fx: GitEnvWithController;
beforeAll(async () => {
  fx = await startGitEnv();
});
afterAll(async () => {
  await fx?.dispose();
});

interface WhyJson {
  ready: boolean;
  chain: string[];
  links: {
    depth: number;
    kind: string;
    namespace?: string;
    name: string;
    reason?: string;
    message?: string;
    relation?: string;
  }[];
}

const why = async (ns: string, name: string) => {
  const text = await packagesync('why', name, '-n', ns);
  const json = await packagesync('why', name, '-n', ns, '-o', 'json');
  return { text, json: JSON.parse(json.stdout) as WhyJson, jsonCode: json.code };
};

describe('packagesync why follows a dependency into its own chain', () => {
  it("to the dependency's render failure, file:line printed", async () => {
    const ns = await fx.namespace('e2e-why-render');
    const { url } = await fx.repo('why-render', {
      'infra/bad.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n data: {}\n',
      'app/cm.yaml': configMap('app'),
    });
    await fx.sync(ns, 'infra', { source: { url, path: 'infra' }, retryInterval: '5s' });
    await fx.sync(ns, 'app', { source: { url, path: 'app' }, dependsOn: [{ name: 'infra' }], retryInterval: '5s' });
    const failed = await waitCondition(ns, 'infra', 'Ready', 'False', 'RenderFailed');
    const renderMessage = failed.status!.conditions!.find((c) => c.type === 'Ready')!.message;
    expect(renderMessage).toMatch(/^bad\.yaml:\d+:\d+/);
    await waitCondition(ns, 'app', 'Ready', 'False', 'DependencyNotReady');

    const { text, json, jsonCode } = await why(ns, 'app');
    expect(text.code).toBe(1);
    expect(jsonCode).toBe(1);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^PackageSync ${ns}/app  Ready=False DependencyNotReady: .*${ns}/infra`));
    expect(lines[1]).toBe(`└ dependsOn ${ns}/infra  Ready=False RenderFailed: ${renderMessage}`);
    expect(json.chain).toEqual(lines);
    expect(json.links[1]).toMatchObject({
      depth: 1,
      kind: 'PackageSync',
      namespace: ns,
      name: 'infra',
      relation: 'dependsOn',
      reason: 'RenderFailed',
      message: expect.stringMatching(/^bad\.yaml:\d+:\d+/),
    });
  });

  it("to the Pod of a dependency's Deployment that cannot pull its image", async () => {
    const ns = await fx.namespace('e2e-why-deppull');
    const { url } = await fx.repo('why-deppull', {
      'db/db.yaml': deployment('db', { failure: 'ImagePullBackOff' }),
      'app/cm.yaml': configMap('app'),
    });
    await fx.sync(ns, 'db', { source: { url, path: 'db' }, timeout: '120s' });
    await fx.sync(ns, 'app', { source: { url, path: 'app' }, dependsOn: [{ name: 'db' }], retryInterval: '5s' });
    // the Pod's reason shows as soon as kwok's stage sets it, while db still waits for health
    const { text, json } = await eventually(
      'why app reaching the Pod',
      async () => {
        const r = await why(ns, 'app');
        return /Pod\/.*(ErrImagePull|ImagePullBackOff)/.test(r.text.stdout) && r;
      },
      { timeoutMs: 100_000, intervalMs: 1_000 },
    );
    expect(text.code).toBe(1);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^PackageSync ${ns}/app  Ready=False DependencyNotReady: `));
    expect(lines[1]).toMatch(new RegExp(`^└ dependsOn ${ns}/db  Ready=(False|Unknown) `));
    expect(lines[2]).toMatch(new RegExp(`^  └ Deployment/${ns}/db  `));
    expect(lines[3]).toMatch(new RegExp(`^    └ ReplicaSet/${ns}/db-[a-z0-9]+$`));
    expect(lines[4]).toMatch(new RegExp(`^      └ Pod/${ns}/db-[a-z0-9]+-[a-z0-9]+  (ErrImagePull|ImagePullBackOff)`));
    expect(lines[4]).toContain('registry.local/db');
    expect(json.links.map((l) => [l.depth, l.kind])).toEqual([
      [0, 'PackageSync'],
      [1, 'PackageSync'],
      [2, 'Deployment'],
      [3, 'ReplicaSet'],
      [4, 'Pod'],
    ]);
    expect(json.links[4]!.reason).toMatch(/^(ErrImagePull|ImagePullBackOff)$/);
    expect(json.links[4]!.message).toContain('registry.local/db');
  });

  it('ends a dependsOn cycle with a line naming it', async () => {
    const ns = await fx.namespace('e2e-why-cycle');
    const { url } = await fx.repo('why-cycle', { 'cm.yaml': configMap('c') });
    await fx.sync(ns, 'x', { source: { url }, dependsOn: [{ name: 'y' }], retryInterval: '5s' });
    await fx.sync(ns, 'y', { source: { url }, dependsOn: [{ name: 'x' }], retryInterval: '5s' });
    await waitCondition(ns, 'x', 'Ready', 'False', 'DependencyCycle');

    const { text, json } = await why(ns, 'x');
    expect(text.code).toBe(1);
    const lines = text.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(new RegExp(`^PackageSync ${ns}/x  Ready=False DependencyCycle: `));
    expect(lines[1]).toMatch(new RegExp(`^└ dependsOn ${ns}/y  `));
    expect(lines[2]).toBe(
      `  └ dependsOn ${ns}/x  spec.dependsOn forms a cycle: ${ns}/x → ${ns}/y → ${ns}/x; none of them can ` +
        'become Ready: remove one of these dependsOn entries',
    );
    expect(json.links.at(-1)).toMatchObject({ depth: 2, relation: 'cycle', reason: 'DependencyCycle', name: 'x' });
  });
});
