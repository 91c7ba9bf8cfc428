/**
 * Encrypted kustomize sources through the real controller, sops, kustomize and API server (Flux's
 * DecryptSources): a secretGenerator from a SOPS-encrypted dotenv file and an encrypted patch become a
 * Secret holding the decrypted values; the plaintext is nowhere in status, events, the controller's logs
 * (trace), its temp dir (where build scratch views live) or its git cache. A wrong key fails
 * DecryptionFailed naming the file, nothing applied. Also: Flux's controller-wide --sops-age-secret, Flux's
 * `kustomize.toolkit.fluxcd.io/decrypt: Disabled` opt-out, and `packagesync diff|apply --age-key-file`.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conditionOf } from '../src/core/status.ts';
import { ageKeyPair } from '../test/support/age.ts';
import { sopsEncrypt } from '../test/support/sops.ts';
import { packageDir, packagesync } from './support/cli.ts';
import { kube } from './support/cluster.ts';
import type { ControllerHandle } from './support/controller.ts';
import { createPackageSync, getPackageSync, packageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnv } from './support/git-env.ts';
import { cmPath, configMap, get } from './support/safety.ts';

const PLAINTEXT = `pw-${randomBytes(12).toString('hex')}`;
const PATCHED = `patched-${randomBytes(12).toString('hex')}`;
const right = ageKeyPair();
const wrong = ageKeyPair();
const global = ageKeyPair();

let env: GitEnv;
let controller: ControllerHandle;
let ns: string;
let controllerNs: string;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'psync-srcdec-e2e-'));
  env = await startGitEnv(false);
  ns = await env.namespace('sopssrc');
  controllerNs = await env.namespace('sopsctl');
  const client = await kube();
  for (const [namespace, name, identity] of [
    [ns, 'sops-age', right.identity],
    [controllerNs, 'global-age', global.identity],
  ] as const) {
    await client.request('POST', `/api/v1/namespaces/${namespace}/secrets`, {
      body: { metadata: { name }, stringData: { 'identity.agekey': `# test key\n${identity}\n` } },
    });
  }
  await mkdir(join(work, 'tmp'));
  controller = await env.startController({
    args: [
      '--log-level',
      'trace',
      '--git-cache-dir',
      join(work, 'git'),
      '--controller-namespace',
      controllerNs,
      '--sops-age-secret',
      'global-age',
    ],
    // the build's scratch views (and the tools' private homes) are made here: searched for plaintext below
    env: { ...process.env, TMPDIR: join(work, 'tmp') },
  });
}, 120_000);

afterAll(async () => {
  await env?.dispose();
  if (work) await rm(work, { recursive: true, force: true });
});

/** A package: a secretGenerator from an encrypted dotenv file, a Secret patched by an encrypted patch, a ConfigMap. */
async function encryptedPackage(name: string, recipient: string): Promise<Record<string, string>> {
  return {
    'kustomization.yaml': [
      'resources: [cm.yaml, secret.yaml]',
      'generatorOptions: {disableNameSuffixHash: true}',
      'secretGenerator:',
      `- name: ${name}-env`,
      '  envs: [secrets.env]',
      'patches:',
      '- path: patch.enc.yaml',
      '',
    ].join('\n'),
    'cm.yaml': configMap(`${name}-cm`, { a: 'b' }),
    'secret.yaml': `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}-patched\nstringData:\n  kept: plain\n`,
    'secrets.env': await sopsEncrypt(`PASSWORD=${PLAINTEXT}\nUSER=admin\n`, recipient, { format: 'dotenv' }),
    'patch.enc.yaml': await sopsEncrypt(
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}-patched\nstringData:\n  extra: ${PATCHED}\n`,
      recipient,
      { format: 'yaml', encryptedRegex: '^(data|stringData)$' },
    ),
  };
}

async function create(name: string, url: string, decryption: unknown): Promise<void> {
  await createPackageSync(
    packageSync(ns, name, controller.shard, {
      source: { url },
      targetNamespace: ns,
      interval: '1h',
      retryInterval: '2s',
      ...(decryption === undefined ? {} : { decryption: decryption as { provider: 'sops' } }),
    }),
  );
}

const secretData = async (name: string): Promise<Record<string, string> | undefined> => {
  const s = await get(`/api/v1/namespaces/${ns}/secrets/${name}`);
  const data = s?.data as Record<string, string> | undefined;
  return data && Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
};

/** Every file under dir whose bytes contain one of the forms. */
async function filesHolding(dir: string, forms: string[]): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name);
    const bytes = await readFile(path).catch(() => Buffer.alloc(0));
    if (forms.some((f) => bytes.includes(f))) found.push(path);
  }
  return found;
}

describe('encrypted kustomize sources (secretGenerator envs, patches)', () => {
  it('applies the Secret generated from an encrypted dotenv file, and the encrypted patch, decrypted', async () => {
    const { url } = await env.repo('gen-env', await encryptedPackage('app', right.recipient));
    await create('app', url, { provider: 'sops', secretRef: { name: 'sops-age' } });
    await waitReady(ns, 'app');
    expect(await secretData('app-env')).toEqual({ PASSWORD: PLAINTEXT, USER: 'admin' });
    expect(await secretData('app-patched')).toEqual({ kept: 'plain', extra: PATCHED });
  }, 120_000);

  it('fails DecryptionFailed naming the file when the key cannot decrypt it; nothing of the package is applied', async () => {
    const { url } = await env.repo('gen-wrong', await encryptedPackage('wrong', wrong.recipient));
    await create('wrong', url, { provider: 'sops', secretRef: { name: 'sops-age' } });
    const ps = await waitCondition(ns, 'wrong', 'Ready', 'False', 'DecryptionFailed');
    expect(conditionOf(ps.status, 'Ready')?.message).toBe(
      `kustomization.yaml: secretGenerator envs entry "secrets.env" (secrets.env) cannot be decrypted with the identities ` +
        `of Secret ${ns}/sops-age: none of these age identities can decrypt its data key; it is encrypted for ${wrong.recipient}`,
    );
    expect(ps.status?.inventory?.entries ?? []).toEqual([]);
    expect(await get(cmPath(ns, 'wrong-cm'))).toBeUndefined();
    expect(await secretData('wrong-env')).toBeUndefined();
  }, 120_000);

  it("uses the controller-wide --sops-age-secret for spec.decryption without a secretRef (Flux's fallback)", async () => {
    const { url } = await env.repo('gen-global', await encryptedPackage('global', global.recipient));
    await create('global', url, { provider: 'sops' });
    await waitReady(ns, 'global');
    expect(await secretData('global-env')).toEqual({ PASSWORD: PLAINTEXT, USER: 'admin' });

    // `packagesync plan` decrypts with the same Secret when told which it is: nothing to change
    const planned = await packagesync(
      'plan',
      'global',
      '-n',
      ns,
      '--allow-insecure-http',
      '--sops-age-secret',
      `${controllerNs}/global-age`,
    );
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toContain('No changes');
    // without it there is no key to decrypt with: the plan says so, naming the file and never the plaintext
    const keyless = await packagesync('plan', 'global', '-n', ns, '--allow-insecure-http');
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain('DecryptionFailed');
    expect(keyless.stderr + keyless.stdout).not.toContain(PLAINTEXT);
  }, 120_000);

  it('applies a Secret annotated kustomize.toolkit.fluxcd.io/decrypt: Disabled as committed (its app decrypts it)', async () => {
    // a data entry holding a SOPS document is decrypted with spec.decryption set, unless the object opts out
    const document = await sopsEncrypt(`password: ${PLAINTEXT}\n`, right.recipient, { format: 'yaml' });
    const secret = (name: string, annotated: boolean) =>
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n` +
      (annotated ? '  annotations:\n    kustomize.toolkit.fluxcd.io/decrypt: Disabled\n' : '') +
      `data:\n  config.yaml: ${Buffer.from(document).toString('base64')}\n`;
    const { url } = await env.repo('optout', {
      'optout.yaml': secret('optout', true),
      'optin.yaml': secret('optin', false),
    });
    await create('optout', url, { provider: 'sops', secretRef: { name: 'sops-age' } });
    await waitReady(ns, 'optout');
    expect((await secretData('optout'))?.['config.yaml']).toBe(document);
    expect((await secretData('optin'))?.['config.yaml']).toBe(`password: ${PLAINTEXT}\n`);
  }, 120_000);

  it('never writes the plaintext to status, events, logs, the temp dir (build scratch) or the git cache', async () => {
    const client = await kube();
    const statuses = JSON.stringify(
      await Promise.all(['app', 'wrong', 'global', 'optout'].map((n) => getPackageSync(ns, n))),
    );
    const events = JSON.stringify(
      (await client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/events`)).items,
    );
    const logs = controller.logs.join('\n');
    expect(logs).toContain('"level":"debug"');
    const forms = [PLAINTEXT, PATCHED, Buffer.from(PLAINTEXT).toString('base64'), right.identity, global.identity];
    for (const form of forms) {
      expect(statuses.includes(form), 'status').toBe(false);
      expect(events.includes(form), 'events').toBe(false);
      expect(logs.includes(form), 'logs').toBe(false);
    }
    // the builds ran: their scratch views were under the controller's TMPDIR, and are gone with the plaintext
    expect(await filesHolding(join(work, 'tmp'), forms)).toEqual([]);
    expect(await filesHolding(join(work, 'git'), forms)).toEqual([]);
    expect((await filesHolding(join(work, 'git'), ['sops_mac=ENC['])).length).toBeGreaterThan(0); // the checkout: ciphertext
  });
});

describe('packagesync diff and apply --age-key-file', () => {
  it('decrypt the encrypted sources as spec.decryption does; diff masks the values; a wrong key applies nothing', async () => {
    const pkg = await packageDir(await encryptedPackage('cli', right.recipient));
    const keyFile = join(work, 'keys.txt');
    const wrongFile = join(work, 'wrong.txt');
    await writeFile(keyFile, `${right.identity}\n`, { mode: 0o600 });
    await writeFile(wrongFile, `${wrong.identity}\n`, { mode: 0o600 });
    const common = ['--name', 'cli-pkg', '--namespace', ns];
    try {
      const refused = await packagesync('apply', pkg.dir, ...common, '--age-key-file', wrongFile);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /DecryptionFailed: kustomization\.yaml: secretGenerator envs entry "secrets\.env" \(secrets\.env\) cannot be decrypted with the identities of --age-key-file .*wrong\.txt: none of these age identities/,
      );
      expect(await get(cmPath(ns, 'cli-cm'))).toBeUndefined();

      const diff = await packagesync('diff', pkg.dir, ...common, '--age-key-file', keyFile);
      expect(diff.code, diff.stderr).toBe(1);
      expect(diff.stdout).toContain('cli-env');
      expect(diff.stdout + diff.stderr).not.toContain(PLAINTEXT);
      expect(diff.stdout + diff.stderr).not.toContain(Buffer.from(PLAINTEXT).toString('base64'));

      const applied = await packagesync('apply', pkg.dir, ...common, '--age-key-file', keyFile);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stdout + applied.stderr).not.toContain(PLAINTEXT);
      expect(await secretData('cli-env')).toEqual({ PASSWORD: PLAINTEXT, USER: 'admin' });
      expect(await secretData('cli-patched')).toEqual({ kept: 'plain', extra: PATCHED });
    } finally {
      await pkg.dispose();
    }
  }, 120_000);
});
