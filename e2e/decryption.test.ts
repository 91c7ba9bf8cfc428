/**
 * spec.decryption through the real controller and the upstream sops: fixtures are encrypted in the test by
 * the real `sops encrypt` for age keys made in the test (test/support/age.ts). A SOPS-encrypted Secret is
 * applied decrypted (plain files and a kustomize package); a wrong key, a tampered MAC and a package without
 * spec.decryption fail DecryptionFailed with nothing applied; the plaintext never reaches status, events,
 * the controller's logs (trace level) or `packagesync render` unless --show-secrets.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpecInput } from '../src/api/packagesync.ts';
import { defaultToolPaths } from '../src/config/tool-paths.ts';
import { conditionOf } from '../src/core/status.ts';
import { ageKeyPair } from '../test/support/age.ts';
import { packageDir, packagesync } from './support/cli.ts';
import { kube } from './support/cluster.ts';
import { getPackageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, configMap, get } from './support/safety.ts';

const PLAINTEXT = `pw-${randomBytes(12).toString('hex')}`;
const sops = defaultToolPaths().sops;
const right = ageKeyPair();
const wrong = ageKeyPair();

let env: GitEnvWithController;
let ns: string;
let scratch: string;

/** `sops encrypt` of a YAML document for `recipient`, only data/stringData encrypted (Flux's advice). */
function encrypt(yaml: string, recipient: string, only: string | undefined = '^(data|stringData)$'): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      sops,
      [
        'encrypt',
        '--age',
        recipient,
        ...(only === undefined ? [] : ['--encrypted-regex', only]),
        '--input-type',
        'yaml',
        '--output-type',
        'yaml',
        '--filename-override',
        'secret.yaml',
      ],
      { cwd: scratch, env: { PATH: '/usr/bin:/bin', HOME: scratch, SOPS_DISABLE_VERSION_CHECK: 'true' } },
      (err, stdout, stderr) => (err ? reject(new Error(`sops encrypt: ${stderr}`)) : resolve(stdout)),
    );
    child.stdin?.end(yaml);
  });
}

const secretYaml = (name: string) =>
  `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\ntype: Opaque\nstringData:\n  password: ${PLAINTEXT}\n`;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'psync-sops-'));
  env = await startGitEnv({ args: ['--log-level', 'trace'] });
  ns = await env.namespace('sops');
  const client = await kube();
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { metadata: { name: 'sops-age' }, stringData: { 'identity.agekey': `# test key\n${right.identity}\n` } },
  });
}, 120_000);

afterAll(async () => {
  await env?.dispose();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function create(name: string, url: string, spec: Partial<SpecInput> = {}): Promise<void> {
  await env.sync(ns, name, {
    source: { url },
    targetNamespace: ns,
    interval: '1h',
    retryInterval: '2s',
    decryption: { provider: 'sops', secretRef: { name: 'sops-age' } },
    ...spec,
  });
}

const passwordOf = async (name: string) => {
  const s = await get(`/api/v1/namespaces/${ns}/secrets/${name}`);
  const data = s?.data as Record<string, string> | undefined;
  return data?.password === undefined ? undefined : Buffer.from(data.password, 'base64').toString();
};

async function failsWith(name: string, pattern: RegExp): Promise<void> {
  const ps = await waitCondition(ns, name, 'Ready', 'False', 'DecryptionFailed');
  expect(conditionOf(ps.status, 'Ready')?.message).toMatch(pattern);
  expect(conditionOf(ps.status, 'Stalled')?.status).toBe('True');
  expect(ps.status?.inventory?.entries ?? []).toEqual([]);
  expect(await get(cmPath(ns, `${name}-cm`))).toBeUndefined(); // nothing of the package applied
}

describe('spec.decryption (sops, age)', () => {
  it('applies a SOPS-encrypted Secret of a plain package decrypted', async () => {
    const { url } = await env.repo('plain', {
      'secret.yaml': await encrypt(secretYaml('plain-secret'), right.recipient),
      'cm.yaml': configMap('plain-cm', { a: 'b' }),
    });
    await create('plain', url);
    await waitReady(ns, 'plain');
    expect(await passwordOf('plain-secret')).toBe(PLAINTEXT);
    const live = await get(`/api/v1/namespaces/${ns}/secrets/plain-secret`);
    expect(live).not.toHaveProperty('sops');
  }, 90_000);

  it('applies an encrypted Secret of a kustomize package (namespace set by kustomize: MAC not checked, as Flux)', async () => {
    const { url } = await env.repo('kust', {
      'kustomization.yaml': `resources: [secret.enc.yaml]\nnamespace: ${ns}\ncommonLabels: {team: a}\n`,
      'secret.enc.yaml': await encrypt(secretYaml('kust-secret'), right.recipient),
    });
    await create('kust', url);
    await waitReady(ns, 'kust');
    expect(await passwordOf('kust-secret')).toBe(PLAINTEXT);
  }, 90_000);

  it('decrypts a secretGenerator entry made from an encrypted file (output format by the key, as Flux)', async () => {
    const { url } = await env.repo('gen', {
      'kustomization.yaml':
        'secretGenerator:\n- name: gen\n  files: [config.yaml=config.enc.yaml]\n  options: {disableNameSuffixHash: true}\n',
      'config.enc.yaml': await encrypt(`password: ${PLAINTEXT}\n`, right.recipient, undefined),
    });
    await create('gen', url);
    await waitReady(ns, 'gen');
    const live = await get(`/api/v1/namespaces/${ns}/secrets/gen`);
    const config = Buffer.from(String((live?.data as Record<string, string>)['config.yaml']), 'base64').toString();
    expect(config).toBe(`password: ${PLAINTEXT}\n`);
  }, 90_000);

  it('fails DecryptionFailed, applying nothing, with a key the file is not encrypted for', async () => {
    const { url } = await env.repo('wrong', {
      'secret.yaml': await encrypt(secretYaml('wrong-secret'), wrong.recipient),
      'cm.yaml': configMap('wrong-cm', { a: 'b' }),
    });
    await create('wrong', url);
    await failsWith(
      'wrong',
      new RegExp(
        `^Secret wrong-secret \\(secret\\.yaml.*\\) cannot be decrypted with the identities of Secret ${ns}/sops-age: none of these age identities can decrypt its data key; it is encrypted for ${wrong.recipient}$`,
      ),
    );
  }, 90_000);

  it('fails DecryptionFailed when the MAC no longer matches (a value edited without sops)', async () => {
    const encrypted = await encrypt(secretYaml('mac-secret'), right.recipient);
    const tampered = encrypted.replace('type: Opaque', 'type: Opaque-edited');
    expect(tampered).not.toBe(encrypted);
    const { url } = await env.repo('mac', { 'secret.yaml': tampered, 'cm.yaml': configMap('mac-cm', { a: 'b' }) });
    await create('mac', url);
    await failsWith('mac', /^Secret mac-secret \(secret\.yaml.*\) cannot be decrypted .*: its MAC does not match/);
  }, 90_000);

  it('fails DecryptionFailed for an encrypted Secret in a package without spec.decryption', async () => {
    const { url } = await env.repo('nodecrypt', {
      'secret.yaml': await encrypt(secretYaml('nodecrypt-secret'), right.recipient),
      'cm.yaml': configMap('nodecrypt-cm', { a: 'b' }),
    });
    await env.sync(ns, 'nodecrypt', {
      source: { url },
      targetNamespace: ns,
      interval: '1h',
      retryInterval: '2s',
    });
    await failsWith('nodecrypt', /is encrypted with sops, but spec\.decryption is not set/);
  }, 90_000);

  it('never writes the plaintext to status, events or the logs', async () => {
    const client = await kube();
    const statuses = JSON.stringify(
      await Promise.all(['plain', 'kust', 'gen', 'wrong', 'mac', 'nodecrypt'].map((n) => getPackageSync(ns, n))),
    );
    const events = JSON.stringify(
      (await client.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${ns}/events`)).items,
    );
    const logs = env.controller.logs.join('\n');
    expect(logs).toContain('"level":"debug"'); // the chattiest lines are there to be searched
    for (const form of [PLAINTEXT, Buffer.from(PLAINTEXT).toString('base64'), right.identity]) {
      expect(statuses.includes(form), 'status').toBe(false);
      expect(events.includes(form), 'events').toBe(false);
      expect(logs.includes(form), 'logs').toBe(false);
    }
  });
});

describe('packagesync render of an encrypted package', () => {
  it('prints ciphertext without a key, redacted values with --age-key-file, plaintext only with --show-secrets', async () => {
    const pkg = await packageDir({ 'secret.yaml': await encrypt(secretYaml('cli-secret'), right.recipient) });
    const keyFile = join(scratch, 'keys.txt');
    await writeFile(keyFile, `${right.identity}\n`, { mode: 0o600 });
    try {
      const plain = await packagesync('render', pkg.dir);
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout).toContain('ENC[AES256_GCM');
      expect(plain.stdout).not.toContain(PLAINTEXT);

      const redacted = await packagesync('render', pkg.dir, '--age-key-file', keyFile);
      expect(redacted.code, redacted.stderr).toBe(0);
      expect(redacted.stdout).toContain("password: '**redacted**'");
      expect(redacted.stdout).not.toContain(PLAINTEXT);
      expect(redacted.stdout).not.toContain('ENC[');

      const shown = await packagesync('render', pkg.dir, '--age-key-file', keyFile, '--show-secrets');
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain(PLAINTEXT);

      const bad = join(scratch, 'wrong.txt');
      await writeFile(bad, `${wrong.identity}\n`, { mode: 0o600 });
      const refused = await packagesync('render', pkg.dir, '--age-key-file', bad);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(
        /DecryptionFailed: Secret cli-secret \(secret\.yaml.*\) cannot be decrypted .*: none of these age identities can decrypt/,
      );
      expect(refused.stderr + refused.stdout).not.toContain(PLAINTEXT);
    } finally {
      await pkg.dispose();
    }
  }, 60_000);
});
