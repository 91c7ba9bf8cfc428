/**
 * The image, without a Docker engine (there is none here, and no registry to pull node:24-bookworm-slim
 * from): /app assembled as the Dockerfile and .dockerignore say — production dependencies only, from the
 * lock file, without install scripts; then the final stage's COPY lines through the .dockerignore
 * allow-list — and run as the image runs it: uid 65532, HOME=/tmp-like, NODE_ENV=production, entry
 * point src/main.ts, against the real control plane. It catches what a build and a first start would: a
 * runtime import of a dev dependency or of a test file, a source the allow-list leaves out, a write
 * outside HOME and the git cache.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, matchesGlob, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfig } from './support/cluster.ts';
import { createPackageSync, packageSync, waitReady } from './support/controller.ts';
import { configMap, startGitEnv, type GitEnv } from './support/git-env.ts';
import { get } from './support/safety.ts';

const root = resolve(import.meta.dirname, '..');
const USER = { uid: 65532, gid: 65532 };
let tmp: string;
let app: string;
let env: GitEnv;

/** The final stage's `COPY <src> ./<dest>` lines (not the --from=deps one). */
function finalStageCopies(): string[] {
  const lines = readFileSync(join(root, 'Dockerfile'), 'utf8').split('\n');
  const lastFrom = lines.map((l) => l.startsWith('FROM ')).lastIndexOf(true);
  return lines
    .slice(lastFrom)
    .filter((l) => l.startsWith('COPY ') && !l.includes('--from='))
    .flatMap((l) => l.split(/\s+/).slice(1, -1));
}

/** .dockerignore as an allow-list: everything is excluded (`**`), `!x` lets x in, later patterns exclude again. */
function dockerignore(): (path: string) => boolean {
  const rules = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  return (path) => {
    let ignored = false;
    for (const rule of rules) {
      const negate = rule.startsWith('!');
      const pattern = (negate ? rule.slice(1) : rule).replace(/\/$/, '');
      if (matchesGlob(path, pattern) || matchesGlob(path, `${pattern}/**`)) ignored = !negate;
    }
    return ignored;
  };
}

function run(cmd: string, args: string[], opts: { cwd: string; user?: typeof USER; env?: NodeJS.ProcessEnv }) {
  const res = spawnSync(cmd, args, { cwd: opts.cwd, encoding: 'utf8', env: opts.env ?? process.env, ...opts.user });
  return { code: res.status, out: `${res.error ?? ''}${res.stdout}${res.stderr}` };
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'psync-image-'));
  chmodSync(tmp, 0o755);
  app = join(tmp, 'app');
  mkdirSync(app);
  // stage "deps": package.json + package-lock.json, npm ci --omit=dev --ignore-scripts
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(root, f), join(app, f));
  const ci = run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: app });
  expect(ci.code, ci.out).toBe(0);
  rmSync(join(app, 'package-lock.json'));
  // final stage: its COPY lines, through .dockerignore
  const ignored = dockerignore();
  for (const source of finalStageCopies()) {
    cpSync(join(root, source), join(app, source), {
      recursive: true,
      filter: (from) => {
        const rel = relative(root, from);
        return rel === '' || rel === source.replace(/\/$/, '') || !ignored(rel);
      },
    });
  }
  env = await startGitEnv(false);
}, 240_000);

afterAll(async () => {
  await env?.dispose();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the image layout', () => {
  it('holds production dependencies and sources only', () => {
    expect(existsSync(join(app, 'node_modules/yaml'))).toBe(true);
    for (const dev of ['vitest', 'typescript', 'eslint', 'prettier']) {
      expect(existsSync(join(app, 'node_modules', dev)), `dev dependency ${dev} in the image`).toBe(false);
    }
    expect(existsSync(join(app, 'src/main.ts'))).toBe(true);
    expect(existsSync(join(app, 'src/core/status.test.ts'))).toBe(false);
    expect(existsSync(join(app, 'test'))).toBe(false);
    expect(existsSync(join(app, 'e2e'))).toBe(false);
  });

  it('starts as uid 65532 with the image environment and reconciles a package', async () => {
    const home = join(tmp, 'home');
    mkdirSync(home);
    chownSync(home, USER.uid, USER.gid);
    // the admin kubeconfig, readable by the image user for this test only
    const config = join(tmp, 'kubeconfig');
    copyFileSync(kubeconfig(), config);
    chmodSync(config, 0o644);
    const imageEnv = { HOME: home, NODE_ENV: 'production', PATH: process.env.PATH };

    const help = run(process.execPath, [join(app, 'src/main.ts'), '--help'], { cwd: app, user: USER, env: imageEnv });
    expect(help.code, help.out).toBe(0);
    expect(help.out).toMatch(/controller/);

    const controller = await env.startController({
      entry: join(app, 'src/main.ts'),
      user: USER,
      env: imageEnv,
      kubeconfig: config,
    });
    const ns = await env.namespace('e2e-image');
    const { url } = await env.repo('image', { 'cm.yaml': configMap('settings', { from: 'image' }) });
    await createPackageSync(packageSync(ns, 'app', controller.shard, { source: { url } }));
    await waitReady(ns, 'app');
    expect((await get(`/api/v1/namespaces/${ns}/configmaps/settings`))?.data?.from).toBe('image');
    expect(controller.logs.join('\n')).not.toMatch(/ERR_MODULE_NOT_FOUND|EACCES|Cannot find (module|package)/);
  });
});
