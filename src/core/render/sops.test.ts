import { describe, expect, it } from 'vitest';
import {
  ageIdentities,
  ageRecipients,
  describeSopsExit,
  encryptedDataEntries,
  isSopsEncrypted,
  REDACTED,
  redactSecretValues,
  sopsFormatOfKey,
  sopsFormatOfValue,
} from './sops.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const sopsMeta = {
  mac: 'ENC[AES256_GCM,data:x]',
  lastmodified: '2026-01-01T00:00:00Z',
  age: [{ recipient: 'age1abc', enc: '…' }],
};

describe('isSopsEncrypted', () => {
  it.each([
    [{ kind: 'Secret', sops: sopsMeta }, true],
    [{ kind: 'ConfigMap', sops: sopsMeta }, true],
    [{ kind: 'Secret', sops: { mac: 'x' } }, false],
    [{ kind: 'Secret', sops: 'yes' }, false],
    [{ kind: 'Secret' }, false],
  ])('%j → %s', (obj, expected) => expect(isSopsEncrypted(obj)).toBe(expected));
});

describe('SOPS formats (Flux marker bytes and formatForPath)', () => {
  it.each([
    ['a: ENC[x]\nsops:\n    mac: ENC[AES256_GCM', 'yaml'],
    ['{"a": "ENC[x]", "sops": {"mac": "ENC[AES', 'json'],
    ['A=ENC[x]\nsops_mac=ENC[AES', 'dotenv'],
    ['[sops]\nmac = ENC[', 'ini'],
    ['password: hunter2', undefined],
  ])('%j → %s', (text, format) => expect(sopsFormatOfValue(text)).toBe(format));

  it.each([
    ['app.env', 'dotenv'],
    ['config.yaml', 'yaml'],
    ['config.YML', 'yaml'],
    ['x.json', 'json'],
    ['x.ini', 'ini'],
    ['tls.key', 'binary'],
    ['password', 'binary'],
  ])('%s → %s', (key, format) => expect(sopsFormatOfKey(key)).toBe(format));
});

describe('encryptedDataEntries', () => {
  it('finds the data entries holding a SOPS document, with the output format of their key', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      data: { 'app.env': b64('A=ENC[x]\nsops_mac=ENC[y]'), plain: b64('hello'), 'c.yaml': b64('mac: ENC[z]') },
    };
    expect(encryptedDataEntries(secret)).toEqual([
      { key: 'app.env', input: 'dotenv', output: 'dotenv' },
      { key: 'c.yaml', input: 'yaml', output: 'yaml' },
    ]);
  });
  it('ignores other kinds and Secrets encrypted whole', () => {
    expect(encryptedDataEntries({ apiVersion: 'v1', kind: 'ConfigMap', data: { a: b64('mac: ENC[') } })).toEqual([]);
    expect(
      encryptedDataEntries({ apiVersion: 'v1', kind: 'Secret', sops: sopsMeta, data: { a: b64('mac: ENC[') } }),
    ).toEqual([]);
  });
});

describe('ageIdentities', () => {
  it('takes AGE-SECRET-KEY-1 lines of keys ending in .agekey only, in key order', () => {
    const r = ageIdentities({
      'b.agekey': '# created: 2026\n# public key: age1…\nAGE-SECRET-KEY-1BBB\n',
      'a.agekey': 'AGE-SECRET-KEY-1AAA\r\nAGE-SECRET-KEY-1CCC',
      'identity.asc': 'AGE-SECRET-KEY-1NOTTHIS',
      'empty.agekey': '# nothing',
    });
    expect(r).toEqual({
      identities: ['AGE-SECRET-KEY-1AAA', 'AGE-SECRET-KEY-1CCC', 'AGE-SECRET-KEY-1BBB'],
      emptyKeys: ['empty.agekey'],
    });
  });
});

describe('messages', () => {
  it('names the recipients of an encrypted object', () => {
    expect(ageRecipients({ sops: sopsMeta })).toEqual(['age1abc']);
  });
  it.each([
    [128, /none of these age identities/],
    [51, /MAC does not match/],
    [25, /does not decrypt/],
    [7, /exit 7/],
  ])('exit %s → %s', (code, message) => expect(describeSopsExit(code)).toMatch(message));

  it('redacts every data and stringData value', () => {
    expect(redactSecretValues({ kind: 'Secret', data: { a: 'eA==' }, stringData: { b: 'x' }, type: 'Opaque' })).toEqual(
      {
        kind: 'Secret',
        data: { a: REDACTED },
        stringData: { b: REDACTED },
        type: 'Opaque',
      },
    );
  });
});
