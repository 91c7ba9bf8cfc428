import { describe, expect, it } from 'vitest';
import { ageRecipientsOfSource, decryptableSources, isEncryptedSource } from './sops-sources.ts';
import { isDecryptionDisabled, sopsFormatOfKey } from './sops.ts';

describe('decryptableSources (Flux DecryptSources: which entries, which format)', () => {
  it.each([
    [
      'secretGenerator files: the format comes from the key, else from the path',
      { secretGenerator: [{ files: ['config.json=config.enc', 'token=token.yaml', 'app.env', 'a.ini', 'x'] }] },
      [
        ['secretGenerator files', 'config.enc', 'json'],
        ['secretGenerator files', 'token.yaml', 'binary'],
        ['secretGenerator files', 'app.env', 'dotenv'],
        ['secretGenerator files', 'a.ini', 'ini'],
        ['secretGenerator files', 'x', 'binary'],
      ],
    ],
    [
      'an image pull Secret key is JSON',
      { secretGenerator: [{ files: ['.dockerconfigjson=ghcr.dockerconfigjson.encrypted'] }] },
      [['secretGenerator files', 'ghcr.dockerconfigjson.encrypted', 'json']],
    ],
    [
      'secretGenerator envs: dotenv unless the path names another format; the deprecated env too',
      { secretGenerator: [{ envs: ['secrets.env.encrypted', 'more.yaml'], env: 'old.env' }] },
      [
        ['secretGenerator envs', 'secrets.env.encrypted', 'dotenv'],
        ['secretGenerator envs', 'more.yaml', 'yaml'],
        ['secretGenerator envs', 'old.env', 'dotenv'],
      ],
    ],
    [
      'patches with a local path (inline and remote ones skipped), patchesStrategicMerge files',
      {
        patches: [{ path: 'p.yaml' }, { patch: 'kind: X' }, { path: 'https://example.com/p.yaml' }, { path: '' }],
        patchesStrategicMerge: ['psm.yaml', 'kind: X\nmetadata: {}\n', '{kind: X}'],
      },
      [
        ['patches', 'p.yaml', 'yaml'],
        ['patchesStrategicMerge', 'psm.yaml', 'yaml'],
      ],
    ],
    [
      'configMapGenerator files are not secrets: left alone, as Flux',
      { configMapGenerator: [{ files: ['a.env'] }], resources: ['secret.yaml'] },
      [],
    ],
    ['junk is skipped', { secretGenerator: ['x', { files: [1, null] }], patches: 'p.yaml' }, []],
  ])('%s', (_, kustomization, expected) => {
    expect(decryptableSources(kustomization).map((e) => [e.field, e.path, e.format])).toEqual(expected);
  });
});

describe('isEncryptedSource (Flux marker bytes per format)', () => {
  it.each([
    ['A=ENC[x]\nsops_mac=ENC[AES…]\n', 'dotenv', true],
    ['A=1\n', 'dotenv', false],
    ['a: ENC[x]\nsops:\n    mac: ENC[AES…]\n', 'yaml', true],
    ['{"sops": {"mac": "ENC[AES…"}}', 'json', true],
    ['{\n\t"data": "ENC[…]",\n\t"sops": {\n\t\t"mac": "ENC[AES…"', 'binary', true],
    ['[sops]\nmac = ENC[…]\n', 'ini', true],
    ['a: ENC[x]\nsops:\n    mac: ENC[AES…]\n', 'dotenv', false],
  ] as const)('%j as %s → %s', (text, format, expected) => expect(isEncryptedSource(text, format)).toBe(expected));
});

describe('ageRecipientsOfSource', () => {
  it.each([
    ['sops:\n  age:\n  - recipient: age1a\n    enc: x\n  - recipient: age1b\n', 'yaml', ['age1a', 'age1b']],
    ['{"sops": {"age": [{"recipient": "age1j"}]}}', 'json', ['age1j']],
    ['{"data": "ENC[x]", "sops": {"age": [{"recipient": "age1bin"}]}}', 'binary', ['age1bin']],
    [
      'A=ENC[x]\nsops_age__list_0__map_recipient=age1d\nsops_age__list_1__map_recipient=age1e\n',
      'dotenv',
      ['age1d', 'age1e'],
    ],
    ['[sops]\nage__list_0__map_recipient = age1i\n', 'ini', ['age1i']],
    ['not: [yaml', 'yaml', []],
    ['A=1\n', 'dotenv', []],
  ] as const)('%j (%s) → %j', (text, format, expected) =>
    expect(ageRecipientsOfSource(text, format)).toEqual(expected),
  );
});

describe("Flux's formatForPath for data keys", () => {
  it.each([
    ['.dockerconfigjson', 'json'],
    ['ghcr.dockerconfigjson', 'json'],
    ['dir.d/token', 'binary'],
    ['CONFIG.YML', 'yaml'],
  ])('%s → %s', (key, format) => expect(sopsFormatOfKey(key)).toBe(format));
});

describe('isDecryptionDisabled (kustomize.toolkit.fluxcd.io/decrypt)', () => {
  const annotated = (value: unknown) => ({
    metadata: { annotations: { 'kustomize.toolkit.fluxcd.io/decrypt': value } },
  });
  it.each([
    [annotated('Disabled'), true],
    [annotated('disabled'), true],
    [annotated('DISABLED'), true],
    [annotated('Enabled'), false],
    [annotated('false'), false],
    [annotated(true), false],
    [{ metadata: {} }, false],
    [{}, false],
  ])('%j → %s', (obj, expected) => expect(isDecryptionDisabled(obj)).toBe(expected));
});
