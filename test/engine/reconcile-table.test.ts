// The engine's decisions, in milliseconds (issue 30): reconcile() over in-memory ports (memory-ports.ts), one row
// per decision — what status it writes, which events, what it applies and deletes, when it runs again. The e2e
// suite proves what Kubernetes does with them; this table proves the engine decides as it should.
import { afterEach, describe, expect, it } from 'vitest';
import { FINALIZER, RECONCILE_REQUESTED_AT, type PackageSync } from '../../src/api/packagesync.ts';
import { INVALID_SPEC_RETRY_MS, TEARDOWN_RETRY_MS } from '../../src/core/exit.ts';
import { reconcile, type ControllerSettings, type RunContext } from '../../src/engine/reconcile.ts';
import { memoryWorld, type MemoryWorld } from './memory-ports.ts';

const NS = 'apps';
const settings: ControllerSettings = {
  applyConcurrency: 4,
  namespacePolicy: { controllerNamespace: 'packagesync-system', allowCrossNamespace: true },
};
const URL = 'https://git.example/r.git';
const cm = (name: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: ${JSON.stringify(data)}\n`;
const key = (name: string) => `/ConfigMap/${NS}/${name}`;

function world(spec: Record<string, unknown> = {}, files: Record<string, string> = { 'a.yaml': cm('a', { k: 'v' }) }) {
  const w = memoryWorld();
  w.source.files = Object.entries(files).map(([path, content]) => ({ path, content }));
  w.packageSyncs.put({
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: { name: 'web', namespace: NS, uid: 'u1', generation: 1 },
    spec: { source: { url: URL }, interval: '10m', retryInterval: '30s', wait: false, ...spec },
  } as unknown as PackageSync);
  return w;
}

afterEach(() => {
  flags = settings;
});

const stored = (w: MemoryWorld) => w.packageSyncs.stored.get(`${NS}/web`)!;
const ready = (w: MemoryWorld) => stored(w).status?.conditions?.find((c) => c.type === 'Ready');
function edit(w: MemoryWorld, f: (ps: PackageSync) => PackageSync) {
  w.packageSyncs.put(f(stored(w)));
}

/** The controller's settings of the next run (a flag changed between two runs: a restart with it). */
let flags: ControllerSettings = settings;

async function run(w: MemoryWorld, context: Partial<RunContext> = {}) {
  return reconcile(NS, 'web', w.ports, flags, { signal: new AbortController().signal, ...context });
}

/** Applied, then found settled (its checkpoint and facts kept): the next periodic check may stop early. */
async function settled(
  spec: Record<string, unknown> = {},
  files?: Record<string, string>,
  before: (w: MemoryWorld) => void = () => undefined,
) {
  const w = world(spec, files);
  before(w);
  expect(await run(w)).toEqual({ failed: false, requeueAfterMs: 600_000 });
  expect(ready(w)?.status).toBe('True');
  await run(w);
  w.stops.length = 0;
  w.source.fetches = 0;
  w.render.builds.length = 0;
  w.cluster.applied.length = 0;
  w.packageSyncs.statusWrites.length = 0;
  w.packageSyncs.events.length = 0;
  return w;
}

/** A Helm package: values from a Secret, and the cluster's capabilities, in its Inputs. */
const helmSpec = { helm: { valuesFrom: [{ kind: 'Secret', name: 'values', valuesKey: 'values.yaml' }] } };
const helmPackage = (w: MemoryWorld) => {
  w.render.tool = 'helm';
  w.secrets.set('values', { 'values.yaml': 'replicas: 1\n' });
};

describe('reconcile(): decisions before any work', () => {
  it('an invalid spec: InvalidSpec with its event, nothing fetched, looked at again after a minute', async () => {
    const w = world({ source: { url: URL, ref: { branch: 'main', tag: 'v1' } } });
    expect(await run(w)).toEqual({ failed: true, requeueAfterMs: INVALID_SPEC_RETRY_MS });
    expect(ready(w)).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(w.packageSyncs.events).toEqual([expect.stringMatching(/^Warning InvalidSpec: /)]);
    expect(w.source.fetches).toBe(0);
  });

  it('suspended: nothing fetched or applied, and nothing runs it again but a change', async () => {
    const w = world({ suspend: true });
    expect(await run(w)).toEqual({ failed: false });
    expect(w.source.fetches).toBe(0);
    expect(w.cluster.applied).toEqual([]);
  });

  it('a dependency not Ready: DependencyNotReady, looked at again after retryInterval, not a failure', async () => {
    const w = world({ dependsOn: [{ name: 'base' }] });
    expect(await run(w)).toEqual({ failed: false, requeueAfterMs: 30_000 });
    expect(ready(w)).toMatchObject({ status: 'False', reason: 'DependencyNotReady' });
    expect(w.source.fetches).toBe(0);
  });

  it('an aborted run (shutdown, leadership lost) writes nothing and sends no event', async () => {
    const w = world({ source: { url: URL, ref: { branch: 'main', tag: 'v1' } } });
    const aborted = new AbortController();
    aborted.abort();
    await run(w, { signal: aborted.signal });
    expect(w.packageSyncs.statusWrites).toEqual([]);
    expect(w.packageSyncs.events).toEqual([]);
  });
});

describe('reconcile(): the shortcuts of a settled package, keyed by its Inputs', () => {
  it('nothing changed: stops before loading; nothing fetched, applied or written', async () => {
    const w = await settled();
    expect(await run(w)).toEqual({ failed: false, requeueAfterMs: 600_000 });
    expect(w.stops).toEqual(['before-load']);
    expect(w.source.fetches).toBe(0);
    expect(w.render.builds).toEqual([]);
    expect(w.packageSyncs.statusWrites).toEqual([]);
  });

  it('a Helm package (valuesFrom, capabilities) takes the same shortcut: nothing fetched, rendered or written', async () => {
    const w = await settled(helmSpec, undefined, helmPackage);
    expect(await run(w)).toEqual({ failed: false, requeueAfterMs: 600_000 });
    expect(w.stops).toEqual(['before-load']);
    expect(w.render.builds).toEqual([]);
    expect(w.packageSyncs.statusWrites).toEqual([]);
  });

  it('a commit elsewhere in a monorepo: the same Inputs, stops before rendering', async () => {
    const w = await settled();
    w.source.commit = 'c'.repeat(40);
    w.source.samePackage = true;
    await run(w);
    expect(w.stops).toEqual(['before-render']);
    expect(w.render.builds).toEqual([]);
    expect(w.cluster.applied).toEqual([]);
  });

  // the Secrets and ConfigMap the spec names exist from the start
  const prepared = (w: MemoryWorld) => {
    w.secrets.set('git-auth', { password: 'one' });
    w.secrets.set('age', { 'identity.agekey': 'AGE-SECRET-KEY-1ONE' });
    w.configMaps.set('vars', { COLOR: 'blue' });
    w.secrets.set('values', { 'values.yaml': 'replicas: 1\n' });
  };
  const postBuild = { postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: 'vars' }] } };

  it.each<[string, Record<string, unknown>, (w: MemoryWorld) => void]>([
    ['the spec (generation)', {}, (w) => edit(w, (ps) => ({ ...ps, metadata: { ...ps.metadata, generation: 2 } }))],
    [
      'the source credentials',
      { source: { url: URL, secretRef: { name: 'git-auth' } } },
      (w) => w.secrets.set('git-auth', { password: 'rotated' }),
    ],
    [
      'a commit that changes the package',
      {},
      (w) => {
        w.source.commit = 'b'.repeat(40);
        w.source.tree = 'tree-2';
      },
    ],
    ['a postBuild variable', postBuild, (w) => w.configMaps.set('vars', { COLOR: 'green' })],
    [
      'the decryption keys',
      { decryption: { provider: 'sops', secretRef: { name: 'age' } } },
      (w) => w.secrets.set('age', { 'identity.agekey': 'AGE-SECRET-KEY-1OTHER' }),
    ],
    [
      'the uid (deleted and re-created under the same name)',
      {},
      (w) => edit(w, (ps) => ({ ...ps, metadata: { ...ps.metadata, uid: 'u2' } })),
    ],
    [
      "the controller's default ServiceAccount (the identity)",
      {},
      () => (flags = { ...settings, defaultServiceAccount: 'deployer' }),
    ],
    [
      'strict substitution (--strict-substitutions)',
      postBuild,
      () => (flags = { ...settings, strictSubstitutions: false }),
    ],
    // the tool follows from the checkout at the commit and the spec, never alone: a commit adds a kustomization
    [
      'the build tool',
      {},
      (w) => {
        w.render.tool = 'kustomize';
        w.source.commit = 'b'.repeat(40);
        w.source.tree = 'tree-2';
      },
    ],
    ['a Helm valuesFrom value', helmSpec, (w) => w.secrets.set('values', { 'values.yaml': 'replicas: 2\n' })],
    [
      "the cluster's capabilities (a Helm package)",
      helmSpec,
      (w) => (w.cluster.capabilities = { kubeVersion: 'v1.37.0', apiVersions: ['v1'] }),
    ],
    [
      'a live object (not an input: what the plan compares)',
      {},
      (w) => w.cluster.put({ ...w.cluster.objects.get(key('a'))! }),
    ],
  ])('only %s changed: no shortcut, the full check decides', async (_what, spec, change) => {
    const w = await settled(spec, undefined, (w) => (prepared(w), spec === helmSpec && helmPackage(w)));
    // the check right after settling stops early: what follows is refused by the change alone
    await run(w);
    expect(w.stops).toEqual(['before-load']);
    w.stops.length = 0;
    w.source.fetches = 0;
    change(w);
    await run(w);
    expect(w.stops).toEqual([]);
    expect(w.source.fetches).toBe(1);
    expect(w.render.builds).toHaveLength(1);
  });

  it('a requested reconcile: no shortcut, the ref asked again, the request answered in status', async () => {
    const w = await settled();
    edit(w, (ps) => ({ ...ps, metadata: { ...ps.metadata, annotations: { [RECONCILE_REQUESTED_AT]: 'now-1' } } }));
    await run(w);
    expect(w.stops).toEqual([]);
    expect(w.source.forgotten).toBe(1);
    expect(stored(w).status?.lastHandledReconcileAt).toBe('now-1');
  });

  it('a requested reconcile asks for the ref as of when the watch showed the request, not as of its own start', async () => {
    const w = await settled();
    edit(w, (ps) => ({ ...ps, metadata: { ...ps.metadata, annotations: { [RECONCILE_REQUESTED_AT]: 'now-2' } } }));
    // a fleet requested at once: a resolve started after 1,000 (this clock) serves each unit, not one per unit
    await run(w, { requestSeen: { value: 'now-2', at: 1_000 } });
    // a value the watch has not shown yet (another request since): as of now
    edit(w, (ps) => ({ ...ps, metadata: { ...ps.metadata, annotations: { [RECONCILE_REQUESTED_AT]: 'now-3' } } }));
    await run(w, { requestSeen: { value: 'now-2', at: 1_000 } });
    expect(w.source.forgottenSince).toEqual([1_000, undefined]);
  });
});

describe('reconcile(): plan and act', () => {
  it('driftPolicy Detect: drift reported in status and an event, nothing applied', async () => {
    const w = await settled({ driftPolicy: 'Detect' });
    const live = w.cluster.objects.get(key('a'))!;
    w.cluster.put({ ...live, data: { k: 'edited' } });
    await run(w);
    expect(w.cluster.applied).toEqual([]);
    expect(stored(w).status?.drift?.total).toBe(1);
    expect(w.packageSyncs.events).toEqual([expect.stringMatching(/^Warning DriftDetected: /)]);
  });

  it('an apply that fails: nothing pruned, the inventory keeps old and new, back off', async () => {
    const w = await settled({ prune: true }, { 'a.yaml': cm('a', { k: 'v' }), 'b.yaml': cm('b', { k: 'v' }) });
    w.source.commit = 'b'.repeat(40);
    w.source.tree = 'tree-2';
    w.source.files = [{ path: 'a.yaml', content: cm('a', { k: 'v2' }) }];
    w.cluster.refuse.add(key('a'));
    expect(await run(w)).toEqual({ failed: true, requeueAfterMs: 30_000 });
    expect(w.cluster.deleted).toEqual([]);
    expect(w.cluster.objects.has(key('b'))).toBe(true);
    expect(
      stored(w)
        .status?.inventory?.entries.map((e) => e.id)
        .sort(),
    ).toEqual([`${NS}_a__ConfigMap`, `${NS}_b__ConfigMap`]);
    expect(ready(w)).toMatchObject({ status: 'False' });
    expect(ready(w)?.reason).not.toBe('PruneBudgetExceeded');
  });

  it('a new generation while the health wait runs: superseded, no failure recorded, the manager re-runs it', async () => {
    const deployment =
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}}}\n';
    const w = world({ wait: true }, { 'deploy.yaml': deployment });
    const superseded = new AbortController();
    superseded.abort();
    expect(await run(w, { superseded: superseded.signal })).toEqual({ failed: false });
    expect(w.cluster.applied).toEqual(['apps/Deployment/apps/web']);
    expect(ready(w)?.reason).not.toBe('HealthCheckFailed');
  });
});

describe('reconcile(): a PackageSync being deleted', () => {
  const deleting = async (deletionPolicy?: string) => {
    const w = await settled(deletionPolicy ? { deletionPolicy } : {});
    edit(w, (ps) => ({ ...ps, metadata: { ...ps.metadata, deletionTimestamp: '2026-11-27T00:00:00Z' } }));
    return w;
  };

  it('prunes its objects, then lets go of the finalizer', async () => {
    const w = await deleting();
    expect(stored(w).metadata.finalizers).toEqual([FINALIZER]);
    expect(await run(w)).toEqual({ failed: false });
    expect(w.cluster.deleted).toEqual([key('a')]);
    expect(stored(w).metadata.finalizers).toEqual([]);
  });

  it('deletionPolicy Orphan: leaves its objects, lets go of the finalizer', async () => {
    const w = await deleting('Orphan');
    expect(await run(w)).toEqual({ failed: false });
    expect(w.cluster.deleted).toEqual([]);
    expect(w.cluster.objects.has(key('a'))).toBe(true);
    expect(stored(w).metadata.finalizers).toEqual([]);
  });

  it('a delete that fails: the finalizer stays, an event says why, back soon', async () => {
    const w = await deleting();
    const objects = w.ports.objects;
    const forPackage = objects.forPackage.bind(objects);
    objects.forPackage = (owner, serviceAccount) => ({
      ...forPackage(owner, serviceAccount),
      delete: async () => Promise.reject(Object.assign(new Error('forbidden'), { status: 403 })),
    });
    expect(await run(w)).toEqual({ failed: true, requeueAfterMs: TEARDOWN_RETRY_MS });
    expect(stored(w).metadata.finalizers).toEqual([FINALIZER]);
    expect(w.packageSyncs.events).toEqual([expect.stringMatching(/^Warning /)]);
  });
});
