// The Inputs step keys every shortcut (docs/adr/0037): a check whose inputs differ from the settled check's in any
// one input (or in an input added to core/inputs.ts later) is refused by the check before loading, the settled
// checkpoint and the render cache alike; the same inputs are answered by each.
import { describe, expect, it } from 'vitest';
import { memoryWorld } from '../../test/engine/memory-ports.ts';
import type { PackageSync } from '../api/packagesync.ts';
import { cacheKey, type BuildRequest } from '../adapters/render/build.ts';
import { inputsDigest, type ReconcileInputs } from '../core/inputs.ts';
import { parseSpec } from '../core/spec.ts';
import { readInputs, type Inputs } from './inputs.ts';
import type { FetchedSource, Ports, SourcePort } from './ports.ts';
import { SettledCheckpoints, rememberSettled, unchangedSinceSettled } from './settled-checkpoints.ts';
import { settledFacts, unchangedBeforeLoading } from './unchanged-check.ts';

const NS = 'apps';
const spec = {
  source: { url: 'https://git.example/r.git', ref: { branch: 'main' }, path: 'chart', secretRef: { name: 'git-auth' } },
  postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: 'vars' }] },
  helm: { valuesFrom: [{ kind: 'Secret', name: 'values', valuesKey: 'values.yaml' }] },
  decryption: { provider: 'sops', secretRef: { name: 'age' } },
};

/** The world a reconcile reads, as plain data; each case below changes one thing in it. */
function world() {
  return {
    uid: 'u1',
    generation: 2,
    serviceAccount: undefined as string | undefined,
    strict: true,
    secrets: new Map<string, Record<string, string>>([
      ['git-auth', { password: 'one' }],
      ['values', { 'values.yaml': 'replicas: 1\n' }],
      ['age', { 'identity.agekey': 'AGE-SECRET-KEY-1ONE' }],
    ]),
    configMaps: new Map<string, Record<string, string>>([['vars', { COLOR: 'blue' }]]),
    commit: 'a'.repeat(40),
    pathRevision: 'tree-1',
    tool: 'helm' as const as 'helm' | 'kustomize' | 'plain',
    capabilities: { kubeVersion: 'v1.36.0', apiVersions: ['v1'] },
    lookup: false,
  };
}
type World = ReturnType<typeof world>;

function packageSync(w: World): PackageSync {
  const revision = `main@sha1:${'a'.repeat(40)}`;
  return {
    apiVersion: 'packagesync.io/v1alpha1',
    kind: 'PackageSync',
    metadata: { name: 'web', namespace: NS, uid: w.uid, generation: w.generation, resourceVersion: '7' },
    spec: w.lookup ? { ...spec, helm: { ...spec.helm, lookup: true } } : spec,
    status: {
      observedGeneration: w.generation,
      lastAppliedRevision: revision,
      lastAttemptedRevision: revision,
      conditions: [{ type: 'Ready', status: 'True', reason: 'x', message: '', lastTransitionTime: '' }],
    },
  } as unknown as PackageSync;
}

/** Ports over the world: only what the Inputs step and the shortcuts read. */
function portsOf(w: World, memory: SettledCheckpoints): Ports {
  // the memory ports (test/engine/memory-ports.ts), with the world's source, secrets, tool and capabilities
  const m = memoryWorld();
  m.cluster.capabilities = w.capabilities;
  for (const [name, data] of w.secrets) m.secrets.set(name, data);
  for (const [name, data] of w.configMaps) m.configMaps.set(name, data);
  m.packageSyncs.peekStored = () => packageSync(w);
  m.render.toolFor = async () => w.tool;
  const fetched = (): FetchedSource => ({
    revision: `main@sha1:${w.commit}`,
    commit: w.commit,
    files: [],
    checkoutRoot: '/checkout',
    packagePath: 'chart',
    pathRevision: w.pathRevision,
    // the package read the same at the settled commit while what it reads is unchanged
    samePackageAt: async () => w.pathRevision === 'tree-1',
  });
  const source: SourcePort = {
    fetch: async () => ({ ok: true, value: fetched() }),
    resolve: async () => ({ ok: true, value: w.commit }),
  };
  return { ...m.ports, source, checkpoints: memory };
}

async function inputsOf(w: World, memory = new SettledCheckpoints()): Promise<Inputs> {
  const ports = portsOf(w, memory);
  const ps = packageSync(w);
  const parsed = parseSpec(ps.spec);
  if (!parsed.ok) throw new Error(parsed.failure.message);
  const read = await readInputs({
    ps,
    spec: parsed.value,
    objects: ports.objects.forPackage({ namespace: NS, name: 'web' }),
    ports,
    serviceAccount: w.serviceAccount,
    strictSubstitutions: w.strict,
    signal: new AbortController().signal,
    resolved: () => undefined,
  });
  if (!read.ok) throw new Error(read.failure.message);
  return read.value;
}

/** What a settled check of `w` leaves behind: its checkpoint and its facts for the check before loading. */
async function settle(w: World, digest?: string): Promise<SettledCheckpoints> {
  const memory = new SettledCheckpoints();
  const ports = portsOf(w, memory);
  const inputs = await inputsOf(w);
  const ps = packageSync(w);
  const parsed = parseSpec(ps.spec);
  if (!parsed.ok) throw new Error(parsed.failure.message);
  const checked = { ps, inputs: { ...inputs, digest: digest ?? inputs.digest }, inventory: [] };
  const seen = {
    actsAsController: true,
    inputs: digest ?? inputs.digest,
    source: { commit: w.commit, content: inputs.content, revision: inputs.revision, tool: inputs.tool },
    inventory: [],
    live: new Map(),
  };
  const facts = await settledFacts(ps, parsed.value, seen, 60_000, ports);
  expect(facts).toBeDefined();
  rememberSettled(memory, checked, new Map(), facts);
  return memory;
}

/** Which shortcuts a check of `now` takes after a settled check of `then`. */
async function shortcuts(then: World, now: World) {
  const memory = await settle(then);
  const ports = portsOf(now, memory);
  const signal = new AbortController().signal;
  const opts = { signal, strictSubstitutions: now.strict, defaultServiceAccount: now.serviceAccount };
  const beforeLoad = await unchangedBeforeLoading(NS, 'web', ports, opts);
  const inputs = await inputsOf(now, memory);
  const checkpoint = await unchangedSinceSettled(memory, ports.objects, {
    ps: packageSync(now),
    inputs,
    inventory: [],
  });
  const thenInputs = await inputsOf(then);
  const renderCache = renderKey(inputs.digest) === renderKey(thenInputs.digest);
  return { beforeLoad: beforeLoad !== undefined, checkpoint, renderCache };
}

/** The render cache's key of a build whose request differs in nothing but the Inputs digest. */
function renderKey(digest: string): string {
  const request: BuildRequest = {
    checkoutRoot: '/checkout',
    packagePath: 'chart',
    commit: 'a'.repeat(40),
    files: [],
    spec: {},
    releaseName: 'web',
    releaseNamespace: NS,
    inputs: digest,
  };
  const limits = { timeoutMs: 1, maxOutputBytes: 1, maxFiles: 1 };
  return cacheKey('helm', request, { kustomizePath: 'kustomize', helmPath: 'helm', limits }, { helm: 'v4' });
}

describe('the Inputs digest keys every shortcut', () => {
  it('the same inputs: each shortcut answers (a Helm package included)', async () => {
    expect(await shortcuts(world(), world())).toEqual({ beforeLoad: true, checkpoint: true, renderCache: true });
  });

  it.each<[string, (w: World) => void]>([
    ['the generation (a spec edit)', (w) => (w.generation = 3)],
    ['the uid (deleted and re-created)', (w) => (w.uid = 'u2')],
    ["the controller's default ServiceAccount", (w) => (w.serviceAccount = 'deployer')],
    ['the source credentials', (w) => w.secrets.set('git-auth', { password: 'two' })],
    ['a commit that changes the package', (w) => ((w.commit = 'b'.repeat(40)), (w.pathRevision = 'tree-2'))],
    ['a postBuild variable', (w) => w.configMaps.set('vars', { COLOR: 'green' })],
    ['strict substitution (--strict-substitutions)', (w) => (w.strict = false)],
    ['the decryption keys', (w) => w.secrets.set('age', { 'identity.agekey': 'AGE-SECRET-KEY-1TWO' })],
    // the tool follows from the checkout at the commit (a kustomization added) and the spec, never alone
    [
      'the build tool (a commit adds a kustomization)',
      (w) => ((w.tool = 'kustomize'), (w.commit = 'b'.repeat(40)), (w.pathRevision = 'tree-2')),
    ],
    ['a Helm valuesFrom value', (w) => w.secrets.set('values', { 'values.yaml': 'replicas: 2\n' })],
    ['the cluster capabilities', (w) => (w.capabilities = { kubeVersion: 'v1.37.0', apiVersions: ['v1'] })],
  ])('only %s changed: every shortcut refused', async (_what, change) => {
    const now = world();
    change(now);
    expect(await shortcuts(world(), now)).toEqual({ beforeLoad: false, checkpoint: false, renderCache: false });
  });

  it('spec.helm.lookup on: nothing changed, and still every shortcut refused (what it reads is known only by rendering)', async () => {
    const looking = () => ({ ...world(), lookup: true });
    expect(await shortcuts(looking(), looking())).toEqual({ beforeLoad: false, checkpoint: false, renderCache: false });
  });

  it('a commit elsewhere in a monorepo: the same Inputs (checkpoint, cache); only the check before loading asks', async () => {
    const now = world();
    now.commit = 'c'.repeat(40);
    // the package reads the same (pathRevision); the revision stays the one applied (package-revision.ts)
    const inputs = await inputsOf(now);
    expect(inputs.revision).toBe(`main@sha1:${'a'.repeat(40)}`);
    expect(await shortcuts(world(), now)).toEqual({ beforeLoad: false, checkpoint: true, renderCache: true });
  });

  it('an input added to core/inputs.ts: refused by each shortcut when only it differs', async () => {
    const inputs = await inputsOf(world());
    const withFake = (value: string) => inputsDigest({ ...inputs.record, fakeInput: value } as ReconcileInputs);
    const then = withFake('one');
    const now = withFake('two');
    expect(withFake('one')).toBe(then);
    expect(now).not.toBe(then);
    // the settled check read the new input as 'one'
    const memory = await settle(world(), then);
    const ports = portsOf(world(), memory);
    const checked = (digest: string) => ({ ps: packageSync(world()), inputs: { ...inputs, digest }, inventory: [] });
    // the settled checkpoint: taken for 'one', refused for 'two'
    expect(await unchangedSinceSettled(memory, ports.objects, checked(then))).toBe(true);
    expect(await unchangedSinceSettled(memory, ports.objects, checked(now))).toBe(false);
    // the render cache: another key
    expect(renderKey(now)).not.toBe(renderKey(then));
    expect(renderKey(withFake('one'))).toBe(renderKey(then));
    // the check before loading compares the digest it reads with the one kept, and nothing else: any other
    // digest (here the read without the new input's 'one') is refused
    const signal = new AbortController().signal;
    expect(await unchangedBeforeLoading(NS, 'web', ports, { signal })).toBeUndefined();
  });
});
