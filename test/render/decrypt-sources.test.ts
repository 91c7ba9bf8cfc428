// Encrypted kustomize sources (Flux's DecryptSources) with the real sops, kustomize and age keys: the
// secretGenerator files/envs and patches a package's kustomizations name are decrypted before the build,
// in a base reached through a symlink too; the plaintext lives only in the scratch view, which is gone
// after the build; a build that decrypted is never cached; a wrong key or a tampered file fails
// DecryptionFailed naming the file; a source outside the repository is refused.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRenderer, type BuildRequest, type Built } from '../../src/adapters/render/build.ts';
import type { SourceDecryption } from '../../src/adapters/render/decrypt-sources.ts';
import { createSopsDecryptor } from '../../src/adapters/render/sops.ts';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';
import { ok, type Result } from '../../src/core/failure.ts';
import type { KubeObject } from '../../src/core/object.ts';
import { ageKeyPair } from '../support/age.ts';
import { sopsEncrypt } from '../support/sops.ts';

const tools = defaultToolPaths();
const limits = { timeoutMs: 60_000, maxOutputBytes: 16 << 20, maxFiles: 10_000 };
const right = ageKeyPair();
const wrong = ageKeyPair();
const SECRET = `pw-${randomBytes(8).toString('hex')}`;
const BINARY = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x80]);

let base: string;
let repo: string;
let scratch: string;

async function put(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

const decryption = (identity: string, calls = { n: 0 }): SourceDecryption => ({
  decryptor: createSopsDecryptor({ bin: tools.sops, timeoutMs: 60_000, maxOutputBytes: 16 << 20 }),
  keys: (): Promise<Result<{ identities: string[]; from: string }>> => {
    calls.n++;
    return Promise.resolve(ok({ identities: [identity], from: 'the test keys' }));
  },
});

const request = (extra: Partial<BuildRequest> = {}): BuildRequest => ({
  checkoutRoot: repo,
  packagePath: 'apps/web',
  commit: 'c'.repeat(40),
  files: [],
  spec: {},
  releaseName: 'web',
  releaseNamespace: 'team-a',
  ...extra,
});

const objectsOf = (built: Built) => new Map(built.objects.map((o) => [String(o.object.metadata.name), o.object]));
const dataOf = (o: KubeObject | undefined) =>
  Object.fromEntries(
    Object.entries((o?.data as Record<string, string> | undefined) ?? {}).map(([k, v]) => [
      k,
      Buffer.from(v, 'base64'),
    ]),
  );

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'psync-srcdec-'));
  repo = join(base, 'repo');
  scratch = join(base, 'scratch');
  await mkdir(scratch);
  await put(repo, {
    'apps/web/kustomization.yaml': [
      'resources: [app]', // a symlink to ../../bases/app: kustomize resolves it, and must land in the view
      'generatorOptions: {disableNameSuffixHash: true}',
      'secretGenerator:',
      '- name: env',
      '  envs: [secrets.env]',
      '- name: files',
      '  files: [config.yaml=config.enc.yaml, settings.json=settings.enc.json, keystore=keystore.enc, notes.txt]',
      'patches:',
      '- path: patch.enc.yaml',
      '',
    ].join('\n'),
    'apps/web/secrets.env': await sopsEncrypt(`PASSWORD=${SECRET}\nUSER=admin\n`, right.recipient, {
      format: 'dotenv',
    }),
    'apps/web/config.enc.yaml': await sopsEncrypt(`password: ${SECRET}\n`, right.recipient, { format: 'yaml' }),
    'apps/web/settings.enc.json': await sopsEncrypt(`{"password": "${SECRET}"}`, right.recipient, {
      format: 'json',
    }),
    'apps/web/keystore.enc': await sopsEncrypt(BINARY, right.recipient, { format: 'binary' }),
    'apps/web/notes.txt': 'not encrypted\n',
    'apps/web/patch.enc.yaml': await sopsEncrypt(
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: base-secret\nstringData:\n  patched: ${SECRET}\n`,
      right.recipient,
      { format: 'yaml', encryptedRegex: '^(data|stringData)$' },
    ),
    'bases/app/kustomization.yaml':
      'resources: [secret.yaml]\nsecretGenerator:\n- name: base-env\n  envs: [base.env]\n  options: {disableNameSuffixHash: true}\n',
    'bases/app/secret.yaml': 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: base-secret\nstringData:\n  a: b\n',
    'bases/app/base.env': await sopsEncrypt(`TOKEN=${SECRET}\n`, right.recipient, { format: 'dotenv' }),
  });
  await symlink('../../bases/app', join(repo, 'apps/web/app'));
}, 60_000);

afterAll(async () => {
  if (base) await rm(base, { recursive: true, force: true });
});

describe('encrypted kustomize sources (spec.decryption, as Flux decrypts them before the build)', () => {
  it('decrypts secretGenerator envs and files (dotenv, yaml, json, binary), patches and a base reached through a symlink', async () => {
    const r = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits, scratchDir: scratch });
    const built = await r.build(request({ decrypt: decryption(right.identity) }));
    expect(built.ok, built.ok ? '' : built.failure.message).toBe(true);
    if (!built.ok) return;
    const objects = objectsOf(built.value);
    expect(dataOf(objects.get('env'))).toEqual({ PASSWORD: Buffer.from(SECRET), USER: Buffer.from('admin') });
    const files = dataOf(objects.get('files'));
    expect(files['config.yaml']?.toString()).toBe(`password: ${SECRET}\n`);
    expect(JSON.parse(files['settings.json']!.toString())).toEqual({ password: SECRET });
    expect(files.keystore).toEqual(BINARY); // bytes as committed, not mangled through UTF-8
    expect(files['notes.txt']?.toString()).toBe('not encrypted\n');
    expect(dataOf(objects.get('base-env'))).toEqual({ TOKEN: Buffer.from(SECRET) });
    expect(objects.get('base-secret')?.stringData).toEqual({ a: 'b', patched: SECRET });
    expect(objects.get('base-secret')).not.toHaveProperty('sops');
    expect(built.value.decryptedSources?.files.sort()).toEqual([
      'apps/web/config.enc.yaml',
      'apps/web/keystore.enc',
      'apps/web/patch.enc.yaml',
      'apps/web/secrets.env',
      'apps/web/settings.enc.json',
      'bases/app/base.env',
    ]);
    expect(built.value.decryptedSources?.cipherDigest).toMatch(/^[0-9a-f]{64}$/);
    // the plaintext was only in the scratch view, which is gone
    expect(await readdir(scratch)).toEqual([]);
    // and never cached: the same commit builds (and decrypts) again
    await r.build(request({ decrypt: decryption(right.identity) }));
    expect(r.stats()).toMatchObject({ toolRuns: 2, cacheHits: 0 });
  });

  it('without spec.decryption kustomize reads the files as committed (ciphertext), and that build is cached', async () => {
    const r = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits, scratchDir: scratch });
    const built = await r.build(request());
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(Object.keys(dataOf(objectsOf(built.value).get('env')))).toContain('sops_mac');
    expect(built.value.decryptedSources).toBeUndefined();
    await r.build(request());
    expect(r.stats()).toMatchObject({ toolRuns: 1, cacheHits: 1 });
    // a decrypting build of the same commit is another input, not that cache entry
    const decrypted = await r.build(request({ decrypt: decryption(right.identity) }));
    expect(decrypted.ok && dataOf(objectsOf(decrypted.value).get('env')).PASSWORD).toEqual(Buffer.from(SECRET));
  });

  it('reads no keys when nothing the kustomizations name is encrypted', async () => {
    const plain = join(base, 'plain');
    await put(plain, {
      'kustomization.yaml': 'secretGenerator:\n- name: s\n  envs: [a.env]\n',
      'a.env': 'A=1\n',
    });
    const calls = { n: 0 };
    const r = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits, scratchDir: scratch });
    const built = await r.build(request({ checkoutRoot: plain, packagePath: '.', decrypt: decryption('x', calls) }));
    expect(built.ok).toBe(true);
    expect(calls.n).toBe(0);
    expect(built.ok && built.value.decryptedSources).toBeUndefined();
  });

  it('fails DecryptionFailed naming the kustomization, the entry, the file and its recipients with a wrong key; no scratch left', async () => {
    const r = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits, scratchDir: scratch });
    const built = await r.build(request({ decrypt: decryption(wrong.identity) }));
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.failure.reason).toBe('DecryptionFailed');
    expect(built.failure.message).toBe(
      'apps/web/kustomization.yaml: secretGenerator envs entry "secrets.env" (apps/web/secrets.env) cannot be decrypted ' +
        'with the identities of the test keys: none of these age identities can decrypt its data key; it is encrypted for ' +
        right.recipient,
    );
    expect(r.stats().toolRuns).toBe(1); // counted, but kustomize never ran on a half-decrypted tree
    expect(await readdir(scratch)).toEqual([]);
  });

  it('fails DecryptionFailed on a file edited without sops (MAC), and never shows a value', async () => {
    const tampered = join(base, 'tampered');
    // a value sops leaves in clear (the _unencrypted suffix) is still covered by the MAC
    const encrypted = await sopsEncrypt(`A=${SECRET}\nB_unencrypted=two\n`, right.recipient, { format: 'dotenv' });
    await put(tampered, {
      'kustomization.yaml': 'secretGenerator:\n- name: s\n  envs: [a.env]\n',
      'a.env': encrypted.replace('B_unencrypted=two', 'B_unencrypted=edited'),
    });
    const r = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits, scratchDir: scratch });
    const built = await r.build(
      request({ checkoutRoot: tampered, packagePath: '.', decrypt: decryption(right.identity) }),
    );
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.failure.message).toMatch(
      /^kustomization\.yaml: secretGenerator envs entry "a\.env" \(a\.env\) cannot be decrypted .*: its MAC does not match/,
    );
    expect(built.failure.message).not.toContain(SECRET);
  });

  it('fails DecryptionFailed naming the file when it carries the marker but is no sops document', async () => {
    const garbage = join(base, 'garbage');
    await put(garbage, {
      'kustomization.yaml': 'secretGenerator:\n- name: s\n  envs: [a.env]\n',
      'a.env': `A=${SECRET}\nsops_mac=ENC[not-really]\n`,
    });
    const r = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits, scratchDir: scratch });
    const built = await r.build(
      request({ checkoutRoot: garbage, packagePath: '.', decrypt: decryption(right.identity) }),
    );
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.failure.reason).toBe('DecryptionFailed');
    expect(built.failure.message).toMatch(
      /^kustomization\.yaml: secretGenerator envs entry "a\.env" \(a\.env\) cannot be decrypted with the identities of the test keys: /,
    );
    expect(built.failure.message).not.toContain(SECRET);
  });

  it("withholds kustomize's error output once it read decrypted files (it may quote them)", async () => {
    const failing = join(base, 'failing');
    await put(failing, {
      'kustomization.yaml': 'resources: [cm.yaml]\npatches:\n- path: patch.yaml\n',
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n',
      'patch.yaml': await sopsEncrypt(
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: missing-${SECRET}\nstringData:\n  a: ${SECRET}\n`,
        right.recipient,
        { format: 'yaml' },
      ),
    });
    const r = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits, scratchDir: scratch });
    const built = await r.build(
      request({ checkoutRoot: failing, packagePath: '.', decrypt: decryption(right.identity) }),
    );
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.failure.reason).toBe('RenderFailed');
    expect(built.failure.message).toMatch(/after decrypting patch\.yaml; its error output is not shown/);
    expect(built.failure.message).not.toContain(SECRET);
    expect(await readdir(scratch)).toEqual([]);
  });

  it('refuses a source outside the repository (a symlink out), as Flux’s secure filesystem does', async () => {
    const escaping = join(base, 'escaping');
    await put(base, { 'outside.env': await sopsEncrypt('A=1\n', right.recipient, { format: 'dotenv' }) });
    await put(escaping, { 'kustomization.yaml': 'secretGenerator:\n- name: s\n  envs: [a.env]\n' });
    await symlink(join(base, 'outside.env'), join(escaping, 'a.env'));
    const r = createRenderer({ kustomizePath: tools.kustomize, helmPath: tools.helm, limits, scratchDir: scratch });
    const built = await r.build(
      request({ checkoutRoot: escaping, packagePath: '.', decrypt: decryption(right.identity) }),
    );
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(built.failure.reason).toBe('RenderRefused');
    expect(built.failure.message).toMatch(/secretGenerator envs entry "a\.env": resolves outside the repository/);
  });
});
