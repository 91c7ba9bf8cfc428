import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../core/object.ts';
import type { KubeClient } from './client.ts';
import { Informer } from './informer.ts';

describe('Informer handlers', () => {
  // ADR 0032: one object a handler chokes on must not stop the other handlers (nor the watch, which replays it)
  it('a handler that throws is reported, and the others still see the event', () => {
    const errors: string[] = [];
    const informer = new Informer({} as KubeClient, { path: '/x', onError: (e) => errors.push(String(e)) });
    const seen: string[] = [];
    informer.on(() => {
      throw new TypeError('dependsOn.some is not a function');
    });
    informer.on((event, obj) => seen.push(`${event} ${obj.metadata.name}`));
    const obj = { apiVersion: 'v1', kind: 'X', metadata: { namespace: 'a', name: 'odd' } } as KubeObject;
    (informer as unknown as { emit: (e: string, o: KubeObject) => void }).emit('add', obj);
    expect(seen).toEqual(['add odd']);
    expect(errors).toEqual(['Error: a handler failed on add a/odd: dependsOn.some is not a function']);
  });
});
