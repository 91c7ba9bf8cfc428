import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../object.ts';
import { DependsOnAnnotation } from './depends-on.ts';
import { buildGraph } from './graph.ts';
import { ApplySchedule } from './schedule.ts';

const cm = (name: string, dependsOn?: string[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name,
    namespace: 'a',
    ...(dependsOn
      ? { annotations: { [DependsOnAnnotation]: dependsOn.map((d) => `/namespaces/a/ConfigMap/${d}`).join(',') } }
      : {}),
  },
});
const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } };
const webhook: KubeObject = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: { name: 'vw' },
};

function schedule(objects: KubeObject[]) {
  const g = buildGraph(objects);
  if (!g.ok) throw new Error(g.failure.message);
  const s = new ApplySchedule(g.value);
  const name = (i: number) => objects[i]!.metadata.name;
  return {
    s,
    take: () => s.take().map(name),
    index: (n: string) => objects.findIndex((o) => o.metadata.name === n),
    skips: (n: string) =>
      s.failed(objects.findIndex((o) => o.metadata.name === n)).map((k) => `${name(k.node)}<-${name(k.because)}`),
  };
}

describe('ApplySchedule', () => {
  it('hands out what is independent at once, in apply order, each object once', () => {
    const t = schedule([cm('x'), ns, cm('y')]);
    expect(t.take()).toEqual(['a']);
    expect(t.take()).toEqual([]);
    t.s.applied(t.index('a'));
    expect(t.take()).toEqual(['x', 'y']);
    t.s.applied(t.index('x'));
    t.s.applied(t.index('y'));
    expect(t.s.done()).toBe(true);
  });

  it('a failure skips only its dependents, transitively, naming what held each back', () => {
    const t = schedule([cm('db'), cm('app', ['db']), cm('web', ['app']), cm('other')]);
    expect(t.take()).toEqual(['db', 'other']);
    expect(t.skips('db')).toEqual(['app<-db', 'web<-app']);
    expect(t.s.done()).toBe(false); // other is still under way
    t.s.applied(t.index('other'));
    expect(t.s.done()).toBe(true);
    expect(t.s.stateOf(t.index('web'))).toBe('skipped');
  });

  it('depends-on waits for Current, not only applied; an object nobody waits on is done once applied', () => {
    const t = schedule([cm('db'), cm('app', ['db'])]);
    expect(t.take()).toEqual(['db']);
    expect(t.s.needsHealth(t.index('db'))).toBe(true);
    t.s.applied(t.index('db'));
    expect(t.take()).toEqual([]);
    t.s.healthy(t.index('db'));
    expect(t.take()).toEqual(['app']);
    expect(t.s.needsHealth(t.index('app'))).toBe(false);
    t.s.applied(t.index('app'));
    expect(t.s.done()).toBe(true);
  });

  it('applied but never Current: the depends-on dependents are skipped, the implicit ones went ahead', () => {
    // x needs Namespace a applied (implicit); y names a in depends-on
    const t = schedule([
      ns,
      cm('x'),
      { ...cm('y'), metadata: { ...cm('y').metadata, annotations: { [DependsOnAnnotation]: '/Namespace/a' } } },
    ]);
    expect(t.take()).toEqual(['a']);
    t.s.applied(t.index('a'));
    expect(t.take()).toEqual(['x']);
    expect(t.skips('a')).toEqual(['y<-a']);
    t.s.applied(t.index('x'));
    expect(t.s.done()).toBe(true);
  });

  it('a webhook configuration starts once the rest was attempted, failures included', () => {
    const t = schedule([webhook, cm('x'), cm('y')]);
    expect(t.take()).toEqual(['x', 'y']);
    t.s.applied(t.index('x'));
    expect(t.take()).toEqual([]);
    expect(t.skips('y')).toEqual([]);
    expect(t.take()).toEqual(['vw']);
  });

  it('a skipped object releases what is ordered after it', () => {
    const t = schedule([webhook, cm('db'), cm('app', ['db'])]);
    expect(t.take()).toEqual(['db']);
    expect(t.skips('db')).toEqual(['app<-db']);
    expect(t.take()).toEqual(['vw']);
  });

  it('1,000 independent objects and a failure of each tenth: 900 applied, nothing skipped', () => {
    const objects = Array.from({ length: 1000 }, (_, i) => cm(`c${i}`));
    const t = schedule(objects);
    const started = t.take();
    expect(started).toHaveLength(1000);
    let skipped = 0;
    for (let i = 0; i < 1000; i++) {
      if (i % 10 === 0) skipped += t.s.failed(i).length;
      else t.s.applied(i);
    }
    expect(skipped).toBe(0);
    expect(t.s.done()).toBe(true);
  });
});
