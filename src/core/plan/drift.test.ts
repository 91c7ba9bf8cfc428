import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { DigestAnnotation, desiredDigest, needsApply, withDigest } from './drift.ts';
import { isSubset } from './subset.ts';

const ownerMarks = { 'packagesync.io/name': 'web', 'packagesync.io/namespace': 'team-a' };

const desired: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team-a', labels: { app: 'web', ...ownerMarks } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        hostNetwork: false,
        containers: [
          {
            name: 'web',
            image: 'nginx:1.27',
            env: [{ name: 'MODE', value: 'production' }],
            ports: [{ containerPort: 80 }],
            resources: { limits: { cpu: 1, memory: '128Mi' } },
          },
        ],
      },
    },
  },
};

type Path = (string | number)[];
/** A change to a copy of an object: set the value at the path, or delete it when the value is undefined. */
type Edit = [path: Path, value: unknown];

function edited<T>(obj: T, edits: Edit[]): T {
  const copy = structuredClone(obj);
  for (const [path, value] of edits) {
    let node = copy as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
    const last = path[path.length - 1] as string | number;
    if (value === undefined) delete node[last];
    else node[last] = value;
  }
  return copy;
}

const container: Path = ['spec', 'template', 'spec', 'containers', 0];

/** What the API server returns after applying `obj` (a Deployment): defaults, server metadata, status. */
function liveOf(obj: KubeObject, ...edits: Edit[]): KubeObject {
  const server: Edit[] = [
    [['metadata', 'uid'], '5d1c'],
    [['metadata', 'resourceVersion'], '1234'],
    [['metadata', 'generation'], 3],
    [['metadata', 'creationTimestamp'], '2025-01-01T00:00:00Z'],
    [['metadata', 'managedFields'], [{ manager: 'packagesync', operation: 'Apply' }]],
    [['metadata', 'annotations', 'deployment.kubernetes.io/revision'], '3'],
    [['spec', 'progressDeadlineSeconds'], 600],
    [['spec', 'strategy'], { type: 'RollingUpdate' }],
    [['spec', 'template', 'spec', 'hostNetwork'], undefined], // omitempty: false is not returned
    [['spec', 'template', 'spec', 'restartPolicy'], 'Always'],
    [['spec', 'template', 'spec', 'dnsPolicy'], 'ClusterFirst'],
    [[...container, 'terminationMessagePath'], '/dev/termination-log'],
    [[...container, 'terminationMessagePolicy'], 'File'],
    [[...container, 'imagePullPolicy'], 'IfNotPresent'],
    [[...container, 'ports', 0, 'protocol'], 'TCP'],
    [[...container, 'resources', 'limits', 'cpu'], '1'], // quantities come back as strings
    [['status'], { replicas: 2, readyReplicas: 2, observedGeneration: 3 }],
  ];
  return edited(withDigest(obj), [...server, ...edits]);
}

describe('needsApply', () => {
  it.each<[string, KubeObject, KubeObject | undefined, boolean]>([
    ['live missing', desired, undefined, true],
    ['live as applied, with server defaults, metadata and status', desired, liveOf(desired), false],
    ['live as applied, desired already stamped', withDigest(desired), liveOf(desired), false],
    ['someone added a label', desired, liveOf(desired, [['metadata', 'labels', 'extra'], 'x']), false],
    [
      'another controller added an annotation',
      desired,
      liveOf(desired, [['metadata', 'annotations', 'note'], 'x']),
      false,
    ],
    [
      'no digest annotation (adopted or applied by an older version)',
      desired,
      liveOf(desired, [['metadata', 'annotations', DigestAnnotation], undefined]),
      true,
    ],
    ['the package changed since the last apply', edited(desired, [[['spec', 'replicas'], 3]]), liveOf(desired), true],
    [
      'the package removed a field (the subset test alone cannot see it)',
      edited(desired, [[['spec', 'replicas'], undefined]]),
      liveOf(desired),
      true,
    ],
    ['someone scaled by hand', desired, liveOf(desired, [['spec', 'replicas'], 5]), true],
    ['someone changed the image', desired, liveOf(desired, [[...container, 'image'], 'nginx:evil']), true],
    ['someone removed a label we set', desired, liveOf(desired, [['metadata', 'labels', 'app'], undefined]), true],
    ['someone removed an env var we set', desired, liveOf(desired, [[...container, 'env'], []]), true],
    ['someone set hostNetwork', desired, liveOf(desired, [['spec', 'template', 'spec', 'hostNetwork'], true]), true],
    [
      'a sidecar was appended (a harmless extra apply)',
      desired,
      liveOf(desired, [['spec', 'template', 'spec', 'containers', 1], { name: 'proxy', image: 'envoy' }]),
      true,
    ],
    [
      'the server rewrote a quantity (0.5 → 500m): one extra apply',
      withCpu(0.5),
      liveOf(withCpu(0.5), [[...container, 'resources', 'limits', 'cpu'], '500m']),
      true,
    ],
    [
      'desired creationTimestamp: null and status: {} are ignored',
      withServerNoise(desired),
      liveOf(withServerNoise(desired)),
      false,
    ],
  ])('%s', (_name, want, live, expected) => {
    expect(needsApply(want, live)).toBe(expected);
  });

  const secret: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'team-a' },
    type: 'Opaque',
    data: { a: Buffer.from('one').toString('base64') },
    stringData: { b: 'two' },
  };
  const liveSecret = (b: string): KubeObject =>
    edited(withDigest(secret), [
      [['stringData'], undefined],
      [['data'], { a: Buffer.from('one').toString('base64'), b: Buffer.from(b).toString('base64') }],
    ]);

  it.each([
    ['Secret stringData matches data as the server stores it', liveSecret('two'), false],
    ['Secret data edited', liveSecret('changed'), true],
  ])('%s', (_name, live, expected) => {
    expect(needsApply(secret, live)).toBe(expected);
  });
});

function withCpu(cpu: number): KubeObject {
  return edited(desired, [[[...container, 'resources', 'limits', 'cpu'], cpu]]);
}

function withServerNoise(obj: KubeObject): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, creationTimestamp: null }, status: {} };
}

describe('digest annotation', () => {
  it('is the digest of desired without the annotation, whether stamped or not', () => {
    const stamped = withDigest(desired);
    expect(stamped.metadata.annotations?.[DigestAnnotation]).toBe(desiredDigest(desired));
    expect(desiredDigest(stamped)).toBe(desiredDigest(desired));
    expect(withDigest(stamped)).toEqual(stamped);
  });

  it('keeps other annotations and does not change its input', () => {
    const annotated = { ...desired, metadata: { ...desired.metadata, annotations: { note: 'x' } } };
    const stamped = withDigest(annotated);
    expect(stamped.metadata.annotations).toEqual({ note: 'x', [DigestAnnotation]: desiredDigest(annotated) });
    expect(annotated.metadata.annotations).toEqual({ note: 'x' });
    expect(desired.metadata.annotations).toBeUndefined();
  });

  it('changes when the object changes', () => {
    expect(desiredDigest(withCpu(2))).not.toBe(desiredDigest(desired));
  });
});

describe('isSubset', () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['equal scalars', 'a', 'a', true],
    ['different scalars', 'a', 'b', false],
    ['number vs its string (quantity read back)', 1, '1', true],
    ['number vs another string', 1, '1000m', false],
    ['string vs number stays a difference', '80', 80, false],
    ['boolean vs string', true, 'true', false],
    ['map with extra live keys', { a: 1 }, { a: 1, b: 2 }, true],
    ['map missing a desired key', { a: 1, b: 2 }, { a: 1 }, false],
    ['nested maps', { a: { b: { c: 1 } } }, { a: { b: { c: 1, d: 2 }, e: 3 } }, true],
    ['map vs list', { a: 1 }, [1], false],
    ['list vs map', [1], { 0: 1 }, false],
    [
      'lists element-wise subset',
      [{ a: 1 }, { b: 2 }],
      [
        { a: 1, x: 0 },
        { b: 2, y: 0 },
      ],
      true,
    ],
    ['lists in another order', [{ a: 1 }, { b: 2 }], [{ b: 2 }, { a: 1 }], false],
    ['live list longer', [1], [1, 2], false],
    ['live list shorter', [1, 2], [1], false],
    ['desired null vs absent', { a: null }, {}, true],
    ['desired null vs a value', { a: null }, { a: 1 }, false],
    ['desired false vs absent (omitempty)', { a: false }, {}, true],
    ['desired 0 vs absent', { a: 0 }, {}, true],
    ['desired "" vs absent', { a: '' }, {}, true],
    ['desired {} vs absent', { a: {} }, {}, true],
    ['desired [] vs absent', { a: [] }, {}, true],
    ['desired true vs absent', { a: true }, {}, false],
    ['desired {x: false} vs absent is a difference', { a: { x: false } }, {}, false],
    ['desired [] vs a non-empty live list', { a: [] }, { a: [1] }, false],
    ['a __proto__ key is compared as data, not the prototype', JSON.parse('{"__proto__":{"x":1}}'), {}, false],
    ['a constructor key is compared as data', { constructor: 'x' }, {}, false],
    ['matching __proto__ keys', JSON.parse('{"__proto__":{"x":1}}'), JSON.parse('{"__proto__":{"x":1}}'), true],
  ])('%s', (_name, want, live, expected) => {
    expect(isSubset(want, live)).toBe(expected);
  });
});
