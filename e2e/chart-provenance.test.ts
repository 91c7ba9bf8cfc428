/**
 * Chart provenance (issue 33, docs/adr/0041), end to end: a key made by gpg in this test signs a chart with the
 * pinned `helm package --sign` (a `.prov` beside the archive); spec.source.chart.verify with that public key
 * applies it, checked by `helm pull --verify` (Helm's own code); a chart signed by another key, and one with
 * no `.prov`, are refused as VerificationFailed with nothing applied.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartConfigMap, helm, serveChartRepository, type ChartRepository } from './support/chart-repository.ts';
import { kube } from './support/cluster.ts';
import { createPackageSync, packageSync, waitCondition, waitReady } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';
import { cmPath, get } from './support/safety.ts';

const run = promisify(execFile);
let env: GitEnvWithController;
let work: string;
let repo: ChartRepository;
let trustedKeyring: string;

/** A fresh gpg key: its armored public key, and the armored secret keyring helm signs with. */
async function gpgKey(name: string): Promise<{ publicKey: string; secretRing: string }> {
  const home = join(work, `gnupg-${name}`);
  await mkdir(home, { mode: 0o700 });
  const gpg = (...args: string[]) => run('gpg', ['--homedir', home, '--batch', ...args], { maxBuffer: 1 << 20 });
  await gpg('--passphrase', '', '--quick-gen-key', `${name} <${name}@example.com>`, 'rsa2048', 'sign', 'never');
  const { stdout: publicKey } = await gpg('--armor', '--export', name);
  const secretRing = join(home, 'secret.asc');
  const { stdout: secret } = await gpg(
    '--armor',
    '--pinentry-mode',
    'loopback',
    '--passphrase',
    '',
    '--export-secret-keys',
    name,
  );
  await writeFile(secretRing, secret);
  return { publicKey, secretRing };
}

/** `helm package` (signed by `key` when given) into the repository, then `helm repo index`. */
async function publish(version: string, key?: { name: string; secretRing: string }) {
  const chart = join(work, 'src', version, 'app');
  await mkdir(join(chart, 'templates'), { recursive: true });
  await writeFile(join(chart, 'Chart.yaml'), `apiVersion: v2\nname: app\nversion: ${version}\n`);
  await writeFile(join(chart, 'templates', 'cm.yaml'), chartConfigMap('{{ .Release.Name }}-app'));
  const toolEnv = { PATH: process.env.PATH ?? '', HOME: work, HELM_CACHE_HOME: join(work, '.helm-cache') };
  const sign = key ? ['--sign', '--key', key.name, '--keyring', key.secretRing] : [];
  await run(helm, ['package', chart, '--destination', repo.dir, ...sign], { env: toolEnv });
  await run(helm, ['repo', 'index', repo.dir], { env: toolEnv });
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'psync-chart-prov-e2e-'));
  repo = await serveChartRepository(work, 'signed');
  const trusted = await gpgKey('trusted');
  const other = await gpgKey('other');
  trustedKeyring = trusted.publicKey;
  await publish('1.0.0', { name: 'trusted', secretRing: trusted.secretRing });
  await publish('2.0.0', { name: 'other', secretRing: other.secretRing });
  await publish('3.0.0');
  env = await startGitEnv();
}, 600_000);

afterAll(async () => {
  await env?.dispose();
  await repo?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

async function verifiedSync(version: string) {
  const ns = await env.namespace('e2e-chart-prov');
  const client = await kube();
  await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
    body: { metadata: { name: 'keys' }, stringData: { keyring: trustedKeyring } },
  });
  await createPackageSync(
    packageSync(ns, 'web', env.controller.shard, {
      source: {
        chart: { repository: repo.url, name: 'app', version, insecure: true, verify: { secretRef: { name: 'keys' } } },
      },
      interval: '1h',
      retryInterval: '2s',
      wait: false,
    }),
  );
  return ns;
}

describe('chart provenance', () => {
  it('applies a chart whose .prov is signed by a key of the keyring, as helm verify checks it', async () => {
    const ns = await verifiedSync('1.0.0');
    await waitReady(ns, 'web');
    expect((await get(cmPath(ns, 'web-app')))?.data).toEqual({ chart: 'app', version: '1.0.0' });
    expect(repo.requests.some((r) => r.path === '/app-1.0.0.tgz.prov' && r.status === 200)).toBe(true);
  });

  it.each([
    ['signed by a key outside the keyring', '2.0.0'],
    ['without a .prov', '3.0.0'],
  ])('refuses a chart %s: VerificationFailed, nothing applied', async (_what, version) => {
    const ns = await verifiedSync(version);
    const ps = await waitCondition(ns, 'web', 'Stalled', 'True', 'VerificationFailed');
    const message = ps.status!.conditions!.find((c) => c.type === 'Stalled')!.message;
    expect(message).toContain('helm verify');
    expect(message).toContain(`app ${version}`);
    expect(await get(cmPath(ns, 'web-app'))).toBeUndefined();
  });
});
