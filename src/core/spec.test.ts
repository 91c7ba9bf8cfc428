import { describe, expect, it } from 'vitest';
import { crdYaml } from '../api/crd-yaml.ts';
import { checkSameNamespaceRefs, parseSpec } from './spec.ts';

describe('parseSpec', () => {
  it('fills the documented defaults', () => {
    const r = parseSpec({ source: { url: 'https://example.com/repo.git' } });
    expect(r.ok && r.value).toMatchObject({
      interval: '5m',
      retryInterval: '30s',
      timeout: '3m',
      prune: true,
      wait: true,
      suspend: false,
      allowEmpty: false,
      force: false,
      source: { path: '.' },
    });
  });

  it.each([
    [{ source: { url: 'https://x/y.git', ref: { branch: 'main', tag: 'v1' } } }, 'spec.source.ref: set exactly one'],
    [{ source: { url: 'https://x/y.git' }, interval: '5 minutes' }, 'spec.interval: '],
    // it becomes a segment of every object's URL: ".." would be a dot segment
    [{ source: { url: 'https://x/y.git' }, targetNamespace: '..' }, 'spec.targetNamespace: must be a namespace name'],
    [{ source: { url: 'https://x/y.git' }, targetNamespace: 'a/b' }, 'spec.targetNamespace: must be a namespace name'],
    // issue 17: exactly one of git and OCI
    [
      { source: { url: 'https://x/y.git', oci: { url: 'oci://r/x' } } },
      'spec.source: set exactly one of url (git), oci and chart',
    ],
    [{ source: { path: '.' } }, 'spec.source: set exactly one of url (git), oci and chart'],
    [
      { source: { oci: { url: 'oci://r/x', ref: { semver: '1.x', tag: 'v1' } } } },
      'spec.source.oci.ref: set one of tag',
    ],
  ])('rejects %j naming the field', (raw, message) => {
    const r = parseSpec(raw);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.failure).toMatchObject({ reason: 'InvalidSpec', terminal: true });
    expect(!r.ok && r.failure.message).toContain(message);
  });

  // Issue 5 names the reasons: a bad path is InvalidPath and a bad commit InvalidRef, on the PackageSync's
  // status. Neither the API server (the CRD) nor parseSpec (InvalidSpec) may pre-empt the git source's checks.
  it.each([
    [{ path: '../etc' }],
    [{ path: '/etc' }],
    [{ path: 'a/../..' }],
    [{ ref: { commit: 'abc' } }],
    [{ ref: { commit: 'a'.repeat(39) } }],
    [{ ref: { commit: 'a'.repeat(65) } }],
    [{ ref: { commit: '' } }],
    [{ ref: { branch: '' } }],
    [{ ref: { tag: '' } }],
    [{ ref: { semver: '' } }],
    [{ url: '' }],
  ])('leaves %j to the git source (InvalidURL / InvalidPath / InvalidRef), in the CRD too', (source) => {
    expect(parseSpec({ source: { url: 'https://x/y.git', ...source } }).ok).toBe(true);
    const crd = crdYaml();
    expect(crd).not.toContain('path must be relative');
    expect(crd).not.toContain('pattern: ^([0-9a-f]{40}');
    // url and ref (everything in source before path) carry size bounds only
    const urlAndRef = /\n {16}source:\n[\s\S]*?\n {20}path:/.exec(crd)?.[0] ?? '';
    expect(urlAndRef).toContain('maxLength: 2048');
    expect(urlAndRef).not.toContain('minLength');
  });
});

// issue 35: a PackageSync stored before the CRD had these patterns still reaches the controller; parseSpec
// (the first step of every reconcile) refuses it as InvalidSpec naming the field, before any request is made.
describe('parseSpec refuses names no Kubernetes object can have', () => {
  const git = { url: 'https://x/y.git' };
  const crlf = 'deployer\r\nImpersonate-Group: system:masters';
  it.each([
    [{ source: git, serviceAccountName: crlf }, 'spec.serviceAccountName'],
    [{ source: git, serviceAccountName: 'a/b' }, 'spec.serviceAccountName'],
    [{ source: { ...git, secretRef: { name: 'other-ns/secret' } } }, 'spec.source.secretRef.name'],
    [{ source: { ...git, verify: { secretRef: { name: '..' } } } }, 'spec.source.verify.secretRef.name'],
    [{ source: { oci: { url: 'oci://r/x', secretRef: { name: 'a\0' } } } }, 'spec.source.oci.secretRef.name'],
    [{ source: { oci: { url: 'oci://r/x', certSecretRef: { name: 'X' } } } }, 'spec.source.oci.certSecretRef.name'],
    [{ source: git, dependsOn: [{ name: 'a/b' }] }, 'spec.dependsOn.0.name'],
    [{ source: git, dependsOn: [{ name: 'a', namespace: 'a.b' }] }, 'spec.dependsOn.0.namespace'],
    [
      { source: git, helm: { valuesFrom: [{ kind: 'ConfigMap', name: 'other-ns/cm' }] } },
      'spec.helm.valuesFrom.0.name',
    ],
    [
      { source: git, helm: { valuesFrom: [{ kind: 'Secret', name: 'v', valuesKey: '../x' }] } },
      'spec.helm.valuesFrom.0.valuesKey',
    ],
    [{ source: git, helm: { namespace: 'a\nb' } }, 'spec.helm.namespace'],
    [
      { source: git, postBuild: { substituteFrom: [{ kind: 'Secret', name: 'x'.repeat(254) }] } },
      'spec.postBuild.substituteFrom.0.name',
    ],
    [{ source: git, kubeConfig: { secretRef: { name: 'other-ns/secret' } } }, 'spec.kubeConfig.secretRef.name'],
    [{ source: git, kubeConfig: { secretRef: { name: 'k', key: '..' } } }, 'spec.kubeConfig.secretRef.key'],
    [{ source: git, decryption: { provider: 'sops', secretRef: { name: 'ключ' } } }, 'spec.decryption.secretRef.name'],
    [{ source: git, targetNamespace: 'x'.repeat(64) }, 'spec.targetNamespace'],
  ])('%j → InvalidSpec naming %s', (raw, field) => {
    const r = parseSpec(raw);
    expect(!r.ok && r.failure).toMatchObject({ reason: 'InvalidSpec', terminal: true });
    expect(!r.ok && r.failure.message).toMatch(new RegExp(`^${field.replace(/\./g, '\\.')}: `));
    expect(!r.ok && r.failure.message).not.toMatch(/[\r\n\0]/);
  });
});

describe('checkSameNamespaceRefs (--no-cross-namespace-refs)', () => {
  it('accepts dependsOn in the same namespace, named or implied', () => {
    expect(
      checkSameNamespaceRefs({ dependsOn: [{ name: 'a' }, { name: 'b', namespace: 'team-a' }] }, 'team-a').ok,
    ).toBe(true);
    expect(checkSameNamespaceRefs({}, 'team-a').ok).toBe(true);
  });

  it('refuses a dependsOn in another namespace as InvalidSpec naming the entry', () => {
    const r = checkSameNamespaceRefs({ dependsOn: [{ name: 'a' }, { name: 'infra', namespace: 'team-b' }] }, 'team-a');
    expect(!r.ok && r.failure).toMatchObject({ reason: 'InvalidSpec', terminal: true });
    expect(!r.ok && r.failure.message).toContain('spec.dependsOn[1].namespace: team-b is another namespace');
    expect(!r.ok && r.failure.message).toContain('--no-cross-namespace-refs');
  });
});
