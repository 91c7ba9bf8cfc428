/**
 * Hostile packages against both render paths — the CLI (`packagesync render`) and the controller — with
 * canaries outside the checkout (in /tmp and in $HOME), a canary environment variable, and a loopback HTTP
 * server that fails the file if anything contacts it (issue 34). Each package is refused or fails with a
 * condition naming the file, shows no canary, and stays under the pod's 512 MiB: the peak resident memory
 * of each memory-hostile render (template recursion, a 1 GB output, 10⁶ documents) is measured — the CLI
 * with /usr/bin/time (the largest of it and its children), the controller by polling /proc over its process
 * tree — and written to the log for the closing note.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileChange } from '../test/support/git/repo.ts';
import { chart, cm, hostileCases } from '../test/support/hostile-packages.ts';
import { packageDir } from './support/cli.ts';
import { kubeconfig } from './support/cluster.ts';
import { waitCondition } from './support/controller.ts';
import { startGitEnv, type GitEnvWithController } from './support/git-env.ts';

const CANARY = `hostile-canary-${randomBytes(6).toString('hex')}`;
const POD_LIMIT_KIB = 512 * 1024;
const cli = resolve(import.meta.dirname, '../bin/packagesync.js');
let outside: string;
let homeCanary: string;
let server: Server;
let port: number;
const contacts: string[] = [];
let env: GitEnvWithController;

beforeAll(async () => {
  outside = await mkdtemp(join(tmpdir(), 'psync-hostile-outside-'));
  await writeFile(join(outside, 'canary.txt'), `${CANARY}\n`);
  await writeFile(join(outside, 'kustomization.yaml'), 'configMapGenerator: [{name: leak, files: [canary.txt]}]\n');
  homeCanary = join(homedir(), `.psync-hostile-canary-${process.pid}`);
  await writeFile(homeCanary, `${CANARY}\n`);
  server = createServer((req, res) => {
    contacts.push(`${req.method} ${req.url}`);
    res.end('kind: ConfigMap\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
  env = (await startGitEnv({
    env: { ...process.env, PACKAGESYNC_HOSTILE_CANARY: CANARY },
  })) as GitEnvWithController;
});

afterAll(async () => {
  await env?.dispose();
  await new Promise((r) => server?.close(r));
  await rm(outside, { recursive: true, force: true });
  await rm(homeCanary, { force: true });
  // the loopback server must never have been contacted, by either path
  expect(contacts).toEqual([]);
});

/** Each hostile package (test/support/hostile-packages.ts; it lives at app/): refused, naming what. */
const refused = hostileCases(
  [
    'a merge key hiding a generator that reads a canary',
    'a remote base on the loopback server',
    'a git:: base on the loopback server',
    'a generator file URL that also exists as a path',
    'a kustomization that is a symlink to a file outside the checkout',
    'a chart schema $ref to the loopback server',
    'a chart schema $ref to a canary file',
    '.Files.Get through a directory link whose name shares the chart prefix',
  ],
  () => ({ port, outside, leak: join(outside, 'canary.txt'), homeCanary }),
).map(([name, files, said]) => [name, files, 'RenderRefused', said] as const);

/** Memory-hostile packages: each must fail, under the pod's limit. */
const heavy: [string, () => Record<string, FileChange>, string, RegExp][] = [
  [
    'template recursion (a string doubled at each level)',
    () => ({
      'app/Chart.yaml': chart,
      'app/templates/_r.tpl': '{{- define "r" -}}{{ include "r" (printf "%s%s" . .) }}{{- end -}}\n',
      'app/templates/cm.yaml': cm('x', '{a: {{ include "r" "xxxxxxxx" | quote }}}'),
    }),
    'RenderFailed',
    /ran out of memory|template recursion too deep|nested reference/,
  ],
  [
    'a 1 GB output',
    () => ({
      'app/Chart.yaml': chart,
      'app/templates/cm.yaml':
        '{{- range $i := until 2000000 }}\n---\n' + cm('x{{ $i }}', `{a: "${'y'.repeat(480)}"}`) + '{{- end }}\n',
    }),
    'RenderFailed',
    /ran out of memory|wrote more than \d+ bytes/,
  ],
  [
    'three files of 10⁶ empty documents',
    () => Object.fromEntries(['a', 'b', 'c'].map((f) => [`app/${f}.yaml`, '---\n'.repeat(1_000_000)])),
    'RenderFailed',
    /holds more than \d+ YAML documents/,
  ],
];

const peaks: Record<string, number> = {};
afterAll(() => {
  console.log(`render-hostile peak RSS (MiB): ${JSON.stringify(peaks)}`);
});

/** `packagesync render DIR` under /usr/bin/time: exit code, output, and the peak RSS of it and its children. */
function renderCli(dir: string): Promise<{ code: number; stdout: string; stderr: string; peakKiB: number }> {
  return new Promise((done) => {
    execFile(
      '/usr/bin/time',
      ['-f', 'PEAK_KIB=%M', process.execPath, cli, 'render', dir, '--kubeconfig', kubeconfig()],
      { maxBuffer: 256 << 20, timeout: 170_000, env: { ...process.env, PACKAGESYNC_HOSTILE_CANARY: CANARY } },
      (error, stdout, stderr) => {
        const peakKiB = Number(/PEAK_KIB=(\d+)/.exec(stderr)?.[1] ?? NaN);
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr: stderr.replace(/PEAK_KIB=\d+\n?/, ''), peakKiB });
      },
    );
  });
}

async function cliPackage(files: Record<string, FileChange>) {
  const links = Object.entries(files).filter(([, v]) => typeof v === 'object' && v !== null && 'symlink' in v);
  const plain = Object.fromEntries(Object.entries(files).filter(([, v]) => typeof v === 'string')) as Record<
    string,
    string
  >;
  const dir = await packageDir(plain);
  const { mkdir, symlink } = await import('node:fs/promises');
  for (const [path, link] of links) {
    await mkdir(join(dir.dir, path, '..'), { recursive: true });
    await symlink((link as { symlink: string }).symlink, join(dir.dir, path));
  }
  // a git repository, so the CLI takes the directory as the checkout
  await new Promise((r) => execFile('git', ['init', '-q', dir.dir], r));
  return dir;
}

describe('packagesync render (CLI)', () => {
  it.each(refused)('%s: refused, naming the file', async (_, files, reason, said) => {
    const dir = await cliPackage(files());
    try {
      const r = await renderCli(join(dir.dir, 'app'));
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(reason);
      expect(r.stderr).toContain(said);
      expect(r.stdout + r.stderr).not.toContain(CANARY);
    } finally {
      await dir.dispose();
    }
  });

  it('a generator env file naming the canary variable gets nothing from the environment', async () => {
    const dir = await cliPackage({
      'app/kustomization.yaml': 'configMapGenerator: [{name: env, envs: [vars.env]}]\n',
      'app/vars.env': 'PACKAGESYNC_HOSTILE_CANARY\nPLAIN=1\n',
    });
    try {
      const r = await renderCli(join(dir.dir, 'app'));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('PLAIN');
      expect(r.stdout).not.toContain(CANARY);
    } finally {
      await dir.dispose();
    }
  });

  it.each(heavy)('%s: fails under the pod limit', async (name, files, reason, said) => {
    const dir = await cliPackage(files());
    try {
      const r = await renderCli(join(dir.dir, 'app'));
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(reason);
      expect(r.stderr).toMatch(said);
      expect(r.stderr).not.toMatch(/goroutine \d+ \[/);
      peaks[`cli: ${name}`] = Math.round(r.peakKiB / 1024);
      expect(r.peakKiB).toBeLessThan(POD_LIMIT_KIB);
    } finally {
      await dir.dispose();
    }
  });
});

/** The largest resident set any process of the tree under `root` reached while `until` ran (/proc polling). */
async function peakTreeKiB(root: number, until: Promise<unknown>): Promise<number> {
  let peak = 0;
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    const tree = new Set([root]);
    const procs: { pid: number; ppid: number }[] = [];
    for (const entry of await readdir('/proc').catch(() => [])) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      procs.push({ pid: Number(entry), ppid });
    }
    for (let grew = true; grew;) {
      grew = false;
      for (const p of procs) {
        if (!tree.has(p.ppid) || tree.has(p.pid)) continue;
        tree.add(p.pid);
        grew = true;
      }
    }
    for (const pid of tree) {
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      peak = Math.max(peak, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return peak;
}

describe('the controller', () => {
  it.each(refused)('%s: refused, naming the file', async (_, files, reason, said) => {
    const ns = await env.namespace('hostile');
    const { url } = await env.repo(`hostile-${randomBytes(3).toString('hex')}`, files());
    await env.sync(ns, 'web', { source: { url, path: 'app' }, interval: '1h', retryInterval: '1h', wait: false });
    const ps = await waitCondition(ns, 'web', 'Ready', 'False', reason);
    const message = ps.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
    expect(message).toContain(said);
    expect(JSON.stringify(ps.status)).not.toContain(CANARY);
    expect(env.controller.logs.join('\n')).not.toContain(CANARY);
  });

  it.each(heavy)('%s: fails under the pod limit', async (name, files, reason, said) => {
    const ns = await env.namespace('hostile-mem');
    const { url } = await env.repo(`hostile-mem-${randomBytes(3).toString('hex')}`, files());
    await env.sync(ns, 'web', { source: { url, path: 'app' }, interval: '1h', retryInterval: '1h', wait: false });
    const failed = waitCondition(ns, 'web', 'Ready', 'False', reason, 150_000);
    const peakKiB = await peakTreeKiB(env.controller.process.pid!, failed);
    const ps = await failed;
    expect(ps.status?.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(said);
    peaks[`controller: ${name}`] = Math.round(peakKiB / 1024);
    expect(peakKiB).toBeLessThan(POD_LIMIT_KIB);
  });
});
