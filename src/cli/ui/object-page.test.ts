import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../core/object.ts';
import { emitGoYamlV2 } from '../../core/render/goyaml-emit.ts';
import { shown } from './object-page.ts';

describe("an object's page: the live YAML", () => {
  it("masks every value of a Secret, kubectl's last-applied copy of them included", () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'db',
        namespace: 'a',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"password":"aHVudGVyMg=="}}' },
        managedFields: [{ manager: 'kubectl', operation: 'Update' }],
      },
      data: { password: 'aHVudGVyMg==' },
      stringData: { user: 'admin' },
    } as unknown as KubeObject;
    const yaml = emitGoYamlV2(shown(secret));
    expect(yaml).not.toContain('aHVudGVyMg');
    expect(yaml).not.toContain('admin');
    expect(yaml).not.toContain('managedFields');
    expect(yaml).toContain("password: '***'");
  });

  it('keeps everything else of other kinds, status included', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'a', managedFields: [{ manager: 'x' }] },
      data: { color: 'blue' },
    } as unknown as KubeObject;
    expect(shown(cm)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'a' },
      data: { color: 'blue' },
    });
  });
});
