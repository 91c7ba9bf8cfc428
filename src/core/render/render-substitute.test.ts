import { describe, expect, it } from 'vitest';
import { render } from '../../../test/support/render.ts';

const vars = (variables: Record<string, string>, strict = false) => ({ substitution: { variables, strict } });

describe('renderPackage with postBuild substitution', () => {
  it('substitutes before the object is checked and normalised: names and namespaces may be variables', () => {
    const r = render(
      { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${APP}-config\n  namespace: ${NS}\n' },
      vars({ APP: 'web', NS: 'team-b' }),
    );
    expect(r.ok && r.value.objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'team-b/web-config',
    ]);
    expect(r.ok && [...r.value.sources.values()]).toEqual(['cm.yaml:1']);
    // owner labels come after substitution: a variable cannot forge them
    expect(r.ok && r.value.objects[0]?.metadata.labels).toEqual({
      'packagesync.io/name': 'web',
      'packagesync.io/namespace': 'team-a',
    });
  });

  it('without a substitution a ${...} namespace is what it is: an invalid manifest', () => {
    const r = render({ 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ${NS}\n' });
    expect(r.ok || r.failure.reason).toBe('InvalidManifest');
  });

  it('substitutes each item of a List, and skips local configuration as kustomize does before Flux', () => {
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { v: '${V}' } },
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'local', annotations: { 'config.kubernetes.io/local-config': 'true' } },
          data: { v: '${#BROKEN[@]}' },
        },
      ],
    };
    const r = render({ 'list.json': JSON.stringify(list) }, vars({ V: 'x' }));
    expect(r.ok && r.value.objects.map((o) => o.data)).toEqual([{ v: 'x' }]);
  });

  it('a strict failure names the file and the line', () => {
    const r = render(
      {
        'a.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: ${NOPE}\n',
      },
      vars({ V: 'x' }, true),
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure.reason).toBe('SubstitutionFailed');
      expect(r.failure.message).toMatch(/^ConfigMap b in a\.yaml:6 uses the variable NOPE \(at data\.k\)/);
    }
  });

  it('two objects that substitute to the same identity are a duplicate', () => {
    const cm = (n: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${n}\n`;
    const r = render({ 'a.yaml': cm('${A}'), 'b.yaml': cm('${B}') }, vars({ A: 'same', B: 'same' }));
    expect(r.ok || r.failure.reason).toBe('DuplicateObject');
  });

  it('changes the digest when a variable changes, not when nothing is substituted', () => {
    const files = { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: ${V}\n' };
    const one = render(files, vars({ V: '1' }));
    const two = render(files, vars({ V: '2' }));
    expect(one.ok && two.ok && one.value.digest !== two.value.digest).toBe(true);
  });
});
