/**
 * decryptObjects' decisions on plain data, with a stand-in for the sops binary (the real one runs in
 * e2e/decryption.test.ts): what is sent to sops, what is refused without keys, and that a failure names the
 * object, file and recipients but never a value.
 */
import { describe, expect, it } from 'vitest';
import type { Decryptor, SopsOutcome, SopsRequest } from '../adapters/render/sops.ts';
import type { LocatedObject } from '../core/render/manifests.ts';
import { cipherDigest, decryptionKeys, decryptObjects, holdsEncrypted } from './decrypt-step.ts';

const sopsMeta = { mac: 'ENC[x]', lastmodified: '2026-01-01T00:00:00Z', age: [{ recipient: 'age1rcpt', enc: 'e' }] };
const at = (path: string) => ({ path, document: 0, items: [] });
const encrypted: LocatedObject = {
  object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, stringData: { pw: 'ENC[..]' }, sops: sopsMeta },
  where: at('secret.yaml'),
};
const plain: LocatedObject = {
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: 'b' } },
  where: at('cm.yaml'),
};
const generated: LocatedObject = {
  object: {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'gen' },
    data: { 'app.env': Buffer.from('A=ENC[x]\nsops_mac=ENC[y]\n').toString('base64') },
  },
  where: at('kustomization.yaml'),
};
const keys = { identities: ['AGE-SECRET-KEY-1X'], from: 'Secret ns/sops-age' };

type Answer = { ok: true; plaintext: string } | (SopsOutcome & { ok: false });

function stub(answer: (req: SopsRequest) => Answer) {
  const seen: SopsRequest[] = [];
  const decryptor: Decryptor = {
    bin: '/usr/local/bin/sops',
    decrypt: (req) => {
      seen.push(req);
      const a = answer(req);
      return Promise.resolve(a.ok ? { ...a, bytes: Buffer.from(a.plaintext, 'utf8') } : a);
    },
  };
  return { decryptor, seen };
}

describe('decryptObjects', () => {
  it('sends each encrypted object to sops as JSON, with the identities and the MAC choice; leaves the rest', async () => {
    const { decryptor, seen } = stub(() => ({
      ok: true,
      plaintext: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db' },
        stringData: { pw: 'hunter2' },
      }),
    }));
    const r = await decryptObjects(decryptor, [plain, encrypted], keys, { checkMac: true });
    expect(r.ok && r.value.objects.map((o) => o.object)).toEqual([
      plain.object,
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, stringData: { pw: 'hunter2' } },
    ]);
    expect(r.ok && [...r.value.decrypted]).toEqual([1]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ input: 'json', output: 'json', identities: keys.identities, ignoreMac: false });
    expect(JSON.parse(seen[0]!.document)).toEqual(encrypted.object);
  });

  it('decrypts a Secret data entry holding a SOPS document, in the format of its key', async () => {
    const { decryptor, seen } = stub(() => ({ ok: true, plaintext: 'A=1\n' }));
    const r = await decryptObjects(decryptor, [generated], keys, { checkMac: false });
    expect(seen[0]).toMatchObject({ input: 'dotenv', output: 'dotenv', ignoreMac: false });
    const data = r.ok ? (r.value.objects[0]!.object.data as Record<string, string>) : {};
    expect(Buffer.from(data['app.env']!, 'base64').toString()).toBe('A=1\n');
  });

  it('without spec.decryption refuses an object encrypted whole, and passes a data entry through (as Flux)', async () => {
    const { decryptor, seen } = stub(() => ({ ok: true, plaintext: '{}' }));
    const refused = await decryptObjects(decryptor, [encrypted], undefined, { checkMac: true });
    expect(!refused.ok && refused.failure).toMatchObject({ reason: 'DecryptionFailed', terminal: true });
    expect(!refused.ok && refused.failure.message).toMatch(
      /^Secret db \(secret\.yaml\) is encrypted with sops, but spec\.decryption is not set/,
    );
    const passed = await decryptObjects(decryptor, [generated], undefined, { checkMac: true });
    expect(passed.ok && passed.value.objects[0]).toBe(generated);
    expect(seen).toEqual([]);
  });

  it("leaves an object annotated kustomize.toolkit.fluxcd.io/decrypt: Disabled as committed (Flux's opt-out), with keys or without", async () => {
    const optOut = (o: LocatedObject): LocatedObject => ({
      ...o,
      object: {
        ...o.object,
        metadata: { ...o.object.metadata, annotations: { 'kustomize.toolkit.fluxcd.io/decrypt': 'disabled' } },
      },
    });
    const { decryptor, seen } = stub(() => ({ ok: true, plaintext: '{}' }));
    for (const k of [keys, undefined]) {
      const r = await decryptObjects(decryptor, [optOut(encrypted), optOut(generated)], k, { checkMac: true });
      expect(r.ok && r.value.objects.map((o) => o.object)).toEqual([
        optOut(encrypted).object,
        optOut(generated).object,
      ]);
      expect(r.ok && [...r.value.decrypted]).toEqual([]);
    }
    expect(seen).toEqual([]);
    expect(holdsEncrypted([optOut(encrypted), optOut(generated)])).toBe(false);
  });

  it('keeps the bytes sops wrote for a binary entry (not re-encoded as UTF-8)', async () => {
    const bin: LocatedObject = {
      object: {
        ...generated.object,
        data: { keystore: Buffer.from('{"data": "ENC[x]", "sops": {"mac": "ENC[y]"}}').toString('base64') },
      },
      where: generated.where,
    };
    const raw = Buffer.from([0, 0xff, 0xfe, 0x80]);
    const decryptor: Decryptor = {
      bin: 'sops',
      decrypt: () => Promise.resolve({ ok: true, plaintext: raw.toString('utf8'), bytes: raw }),
    };
    const r = await decryptObjects(decryptor, [bin], keys, { checkMac: false });
    const data = r.ok ? (r.value.objects[0]!.object.data as Record<string, string>) : {};
    expect(Buffer.from(data.keystore!, 'base64')).toEqual(raw);
  });

  it.each([
    [
      { ok: false, kind: 'exit', exitCode: 128 } as const,
      /cannot be decrypted with the identities of Secret ns\/sops-age: none of these age identities can decrypt its data key; it is encrypted for age1rcpt$/,
      true,
    ],
    [{ ok: false, kind: 'exit', exitCode: 51 } as const, /its MAC does not match/, true],
    [{ ok: false, kind: 'missing' } as const, /sops binary is missing .* --sops-path/, false],
    [{ ok: false, kind: 'timeout' } as const, /did not finish in time/, false],
  ])('a failed run %j → DecryptionFailed %s', async (answer, message, terminal) => {
    const { decryptor } = stub(() => answer);
    const r = await decryptObjects(decryptor, [plain, encrypted], keys, { checkMac: true });
    expect(!r.ok && r.failure.reason).toBe('DecryptionFailed');
    expect(!r.ok && r.failure.message).toMatch(message);
    expect(!r.ok && (r.failure.terminal ?? false)).toBe(terminal);
  });
});

describe('decryptionKeys', () => {
  const secrets = (data: Record<string, string> | undefined) => ({ read: () => Promise.resolve(data) });
  it('reads the .agekey keys of the Secret', async () => {
    const r = await decryptionKeys(secrets({ 'id.agekey': 'AGE-SECRET-KEY-1A\n' }), 'ns', {
      provider: 'sops',
      secretRef: { name: 's' },
    });
    expect(r).toEqual({ ok: true, value: { identities: ['AGE-SECRET-KEY-1A'], from: 'Secret ns/s' } });
  });
  it('names a missing Secret, and one without identities', async () => {
    const missing = await decryptionKeys(secrets(undefined), 'ns', { provider: 'sops', secretRef: { name: 's' } });
    expect(!missing.ok && missing.failure.message).toBe(
      'Secret ns/s named in spec.decryption.secretRef does not exist',
    );
    const empty = await decryptionKeys(secrets({ 'a.asc': 'x' }), 'ns', { provider: 'sops', secretRef: { name: 's' } });
    expect(!empty.ok && empty.failure.message).toMatch(/holds no age identity: it has no key ending in \.agekey$/);
  });
  it("without a secretRef reads the controller-wide Secret (--sops-age-secret, as Flux); spec.decryption's own wins", async () => {
    const read: string[] = [];
    const port = {
      read: (ns: string, name: string) => {
        read.push(`${ns}/${name}`);
        return Promise.resolve(name === 'gone' ? undefined : { 'x.agekey': `AGE-SECRET-KEY-1${name.toUpperCase()}\n` });
      },
    };
    const wide = { namespace: 'packagesync-system', name: 'global' };
    expect(await decryptionKeys(port, 'ns', { provider: 'sops' }, wide)).toEqual({
      ok: true,
      value: { identities: ['AGE-SECRET-KEY-1GLOBAL'], from: 'Secret packagesync-system/global' },
    });
    expect(await decryptionKeys(port, 'ns', { provider: 'sops', secretRef: { name: 'own' } }, wide)).toMatchObject({
      ok: true,
      value: { identities: ['AGE-SECRET-KEY-1OWN'], from: 'Secret ns/own' },
    });
    expect(read).toEqual(['packagesync-system/global', 'ns/own']);
    const gone = await decryptionKeys(
      port,
      'ns',
      { provider: 'sops' },
      { namespace: 'packagesync-system', name: 'gone' },
    );
    expect(!gone.ok && gone.failure.message).toBe(
      "Secret packagesync-system/gone named in the controller's --sops-age-secret does not exist",
    );
    expect(await decryptionKeys(port, 'ns', { provider: 'sops' })).toMatchObject({
      ok: true,
      value: { identities: [] },
    });
  });
});

describe('holdsEncrypted and cipherDigest', () => {
  it('spots encrypted objects and data entries', () => {
    expect(holdsEncrypted([plain])).toBe(false);
    expect(holdsEncrypted([plain, encrypted])).toBe(true);
    expect(holdsEncrypted([generated])).toBe(true);
  });
  it('does not change with a decrypted value, and changes with the ciphertext', () => {
    const rendered = (pw: string) => [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, stringData: { pw } },
    ];
    expect(cipherDigest([encrypted], rendered('a'))).toBe(cipherDigest([encrypted], rendered('b')));
    const other = { ...encrypted, object: { ...encrypted.object, stringData: { pw: 'ENC[other]' } } };
    expect(cipherDigest([other], rendered('a'))).not.toBe(cipherDigest([encrypted], rendered('a')));
  });
  it('after decrypting sources in the build, blanks the built Secrets too and changes with the sources ciphertext', () => {
    const built = (pw: string): LocatedObject[] => [
      {
        object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'env' }, data: { PW: pw } },
        where: at('k.yaml'),
      },
    ];
    const rendered = (pw: string) => built(pw).map((o) => o.object);
    expect(cipherDigest(built('a'), rendered('a'), 'c1')).toBe(cipherDigest(built('b'), rendered('b'), 'c1'));
    expect(cipherDigest(built('a'), rendered('a'), 'c1')).not.toBe(cipherDigest(built('a'), rendered('a'), 'c2'));
  });
});
