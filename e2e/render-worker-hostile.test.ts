/**
 * Hostile packages against the controller with the render worker engine (--render-engine=worker, issue 27,
 * docs/adr/0038): as e2e/render-hostile.test.ts against the subprocess engine — each is refused or fails
 * with a condition naming the file and shows no canary — plus what only a long-lived worker can suffer: a
 * template that never ends and one that allocates without bound each fail that PackageSync alone, within
 * their limits, and a healthy package synced meanwhile becomes Ready. Nothing contacts the loopback server.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileChange } from '../test/support/git/repo.ts';
import { chart, cm, hostileCases } from '../test/support/hostile-packages.ts';
import { waitCondition } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';

const CANARY = `worker-e2e-canary-${randomBytes(6).toString('hex')}`;
let outside: string;
let server: Server;
let port: number;
const contacts: string[] = [];
let env: GitEnvWithController;

beforeAll(async () => {
  outside = await mkdtemp(join(tmpdir(), 'psync-worker-outside-'));
  await writeFile(join(outside, 'canary.txt'), `${CANARY}\n`);
  server = createServer((req, res) => {
    contacts.push(`${req.method} ${req.url}`);
    res.end('kind: ConfigMap\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
  env = (await startGitEnv({
    args: ['--render-engine', 'worker', '--render-workers', '2', '--render-timeout', '5s'],
    env: { ...process.env, PACKAGESYNC_HOSTILE_CANARY: CANARY },
  })) as GitEnvWithController;
});

afterAll(async () => {
  await env?.dispose();
  await new Promise((r) => server?.close(r));
  await rm(outside, { recursive: true, force: true });
  expect(contacts).toEqual([]);
});

const refused = hostileCases(
  [
    'a remote base on the loopback server',
    'a ../ escape',
    'a resource symlinked out of the checkout',
    'an exec KRM function',
    '.Files.Get through a link out of the chart',
  ],
  () => ({ port, outside, leak: join(outside, 'canary.txt') }),
);

const failing: [string, () => Record<string, FileChange>, RegExp][] = [
  [
    'an endless template',
    () => ({
      'app/Chart.yaml': chart,
      'app/templates/cm.yaml': '{{- range $i := until 100000 }}{{- range $j := until 100000 }}{{- end }}{{- end }}\n',
    }),
    /ran longer than 5s rendering app\/Chart\.yaml and was stopped, twice, each time on a fresh render worker/,
  ],
  [
    'a huge allocation',
    () => ({ 'app/Chart.yaml': chart, 'app/templates/cm.yaml': cm('x', '{n: {{ len (until 400000000) }}}') }),
    /ran out of memory \(the render's limit is \d+ MiB/,
  ],
];

describe('the controller with the render worker engine', () => {
  it.each(refused)('%s: refused, naming the file', async (_, files, said) => {
    const ns = await env.namespace('worker-hostile');
    const { url } = await env.repo(`worker-hostile-${randomBytes(3).toString('hex')}`, files());
    await env.sync(ns, 'web', { source: { url, path: 'app' }, interval: '1h', retryInterval: '1h', wait: false });
    const ps = await waitCondition(ns, 'web', 'Ready', 'False', 'RenderRefused');
    expect(ps.status?.conditions?.find((c) => c.type === 'Ready')?.message).toContain(said);
    expect(JSON.stringify(ps.status)).not.toContain(CANARY);
    expect(env.controller.logs.join('\n')).not.toContain(CANARY);
  });

  it.each(failing)(
    '%s fails that PackageSync alone; a healthy one synced meanwhile is Ready',
    async (_, files, said) => {
      const ns = await env.namespace('worker-bad');
      const bad = await env.repo(`worker-bad-${randomBytes(3).toString('hex')}`, files());
      const good = await env.repo(`worker-good-${randomBytes(3).toString('hex')}`, {
        'app/Chart.yaml': chart,
        'app/templates/cm.yaml': cm('fine', '{a: b}'),
      });
      await env.sync(ns, 'bad', {
        source: { url: bad.url, path: 'app' },
        interval: '1h',
        retryInterval: '1h',
        wait: false,
      });
      const failed = waitCondition(ns, 'bad', 'Ready', 'False', 'RenderFailed', 120_000);
      await env.syncReady(ns, 'good', { source: { url: good.url, path: 'app' }, interval: '1h', wait: false });
      const ps = await failed;
      expect(ps.status?.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(said);
    },
  );
});
