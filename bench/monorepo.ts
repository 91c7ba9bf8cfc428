/**
 * `make bench-monorepo` / `node bench/monorepo.ts [--apps N] [--src-files N] [--history N] [--out FILE]`:
 * what one PackageSync's fetch costs in a large monorepo, against a full clone, on a real git smart-HTTP server
 * (loopback, `git http-backend`). Runs by itself: no cluster.
 *
 * The fixture: `--apps` packages under apps/ (a kustomization reaching bases/web, ten ConfigMaps each),
 * `--src-files` incompressible source files under src/ (what a monorepo holds besides its packages), and
 * `--history` earlier commits that each touched some of everything. Measured, each in a fresh cache:
 *   - full clone:          `git clone --bare` (all history; Argo CD's repo-server fetches this way)
 *   - shallow clone:       `git clone --bare --depth=1` (the whole tree of one commit; Flux's GitRepository)
 *   - PackageSync, sparse: spec.path apps/app-0007 (partial fetch of trees, then that package's blobs)
 *   - PackageSync, whole:  spec.path "." (the same code path checking out everything)
 * then, on a warm PackageSync cache, a commit touching another app: the next fetch of app-0007.
 * Bytes are the server's response bodies; times are wall clock on this machine (2 cores, shared).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { createGitSource } from '../src/adapters/git/index.ts';
import { commitFiles, createRepo, createRepoRoot, startGitHttpServer } from '../test/support/git/index.ts';
import type { FileChange } from '../test/support/git/index.ts';

const run = promisify(execFile);
const { values: args } = parseArgs({
  options: {
    apps: { type: 'string', default: '400' },
    'src-files': { type: 'string', default: '3000' },
    history: { type: 'string', default: '10' },
    out: { type: 'string', default: resolve(import.meta.dirname, 'RESULTS-monorepo.md') },
  },
});
const APPS = Number(args.apps);
const SRC_FILES = Number(args['src-files']);
const HISTORY = Number(args.history);
const PACKAGE = 'apps/app-0007';

const app = (i: number) => `apps/app-${String(i).padStart(4, '0')}`;
const cm = (name: string, salt: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { salt, pad: 'x'.repeat(600) } });

function snapshot(round: number): Record<string, FileChange> {
  const files: Record<string, FileChange> = {};
  for (let i = 0; i < APPS; i++) {
    // each round changes one ConfigMap in a tenth of the apps (never the measured one after round 0)
    if (round > 0 && (i % 10 !== round % 10 || app(i) === PACKAGE)) continue;
    files[`${app(i)}/kustomization.yaml`] =
      `resources: [../../bases/web, ${Array.from({ length: 10 }, (_, k) => `cm-${k}.json`).join(', ')}]\n`;
    for (let k = 0; k < 10; k++) files[`${app(i)}/cm-${k}.json`] = cm(`app-${i}-${k}`, `${round}`);
  }
  if (round === 0) {
    files['bases/web/kustomization.yaml'] = 'resources: [svc.json]\n';
    files['bases/web/svc.json'] = JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' } });
  }
  // a fifth of the source files change every round: history a full clone pays for
  for (let f = 0; f < SRC_FILES; f++) {
    if (round > 0 && f % 5 !== round % 5) continue;
    files[`src/mod-${Math.floor(f / 100)}/file-${f}.bin`] = randomBytes(4096);
  }
  return files;
}

interface Row {
  what: string;
  bytes: number;
  requests: number;
  seconds: number;
}

async function main(): Promise<void> {
  const repos = await createRepoRoot();
  const server = await startGitHttpServer({ root: repos.root, auth: 'none' });
  const work = await mkdtemp(join(tmpdir(), 'psync-bench-monorepo-'));
  try {
    const repo = await createRepo(repos.root, 'mono');
    const started = performance.now();
    for (let round = 0; round <= HISTORY; round++) await commitFiles(repo, 'main', snapshot(round), `round ${round}`);
    // served as a forge serves: packed
    await run('git', ['-C', repo.dir, 'repack', '-adq']);
    console.error(`[bench] fixture: ${APPS} apps, ${SRC_FILES} source files, ${HISTORY + 1} commits, ${s(started)} s`);
    const url = server.url('mono');

    const measure = async (what: string, fn: () => Promise<void>): Promise<Row> => {
      const from = server.requests.length;
      const t = performance.now();
      await fn();
      const seconds = (performance.now() - t) / 1000;
      const served = server.requests.slice(from);
      const row = { what, bytes: served.reduce((n, r) => n + r.bytes, 0), requests: served.length, seconds };
      console.error(`[bench] ${what}: ${mib(row.bytes)} MiB, ${row.requests} requests, ${row.seconds.toFixed(2)} s`);
      return row;
    };
    const git = (...a: string[]) =>
      run('git', a, { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, maxBuffer: 1 << 26 });
    const source = async (name: string) =>
      createGitSource(
        {
          gitCacheDir: join(work, name),
          gitTimeout: '300s',
          allowInsecureHttp: true,
          maxFiles: 100_000,
          maxFileBytes: 1 << 20,
          maxTotalBytes: 1 << 30,
        },
        pino({ level: 'silent' }),
      );
    const fetchPath = async (s: Awaited<ReturnType<typeof source>>, path: string) => {
      const r = await s.fetch({ url, ref: { branch: 'main' }, path }, undefined, AbortSignal.timeout(300_000));
      if (!r.ok) throw new Error(r.failure.message);
    };

    const rows: Row[] = [];
    rows.push(
      await measure(
        'full clone (git clone --bare)',
        async () => void (await git('clone', '-q', '--bare', url, join(work, 'full'))),
      ),
    );
    rows.push(
      await measure(
        'shallow clone (git clone --bare --depth=1)',
        async () => void (await git('clone', '-q', '--bare', '--depth=1', url, join(work, 'shallow'))),
      ),
    );
    const sparse = await source('sparse');
    rows.push(await measure(`PackageSync, path ${PACKAGE} (sparse)`, () => fetchPath(sparse, PACKAGE)));
    const whole = await source('whole');
    rows.push(await measure('PackageSync, path . (whole tree)', () => fetchPath(whole, '.')));
    // the next commit touches other apps and source files only
    await commitFiles(repo, 'main', snapshot(HISTORY + 1), 'next');
    sparse.forget?.(url);
    rows.push(
      await measure(`PackageSync, path ${PACKAGE}, next commit (warm cache)`, () => fetchPath(sparse, PACKAGE)),
    );

    const table = [
      '| fetch | bytes served | requests | seconds |',
      '|---|---:|---:|---:|',
      ...rows.map((r) => `| ${r.what} | ${mib(r.bytes)} MiB | ${r.requests} | ${r.seconds.toFixed(2)} |`),
    ].join('\n');
    const report = [
      '# Monorepo fetch: one package against a full clone',
      '',
      `Generated by \`node bench/monorepo.ts --apps ${APPS} --src-files ${SRC_FILES} --history ${HISTORY}\` on ${new Date().toISOString().slice(0, 10)}: ` +
        `${APPS} packages (10 ConfigMaps each, a kustomization reaching bases/web), ${SRC_FILES} incompressible 4 KiB ` +
        `source files, ${HISTORY + 1} commits; git smart HTTP on loopback. See docs/adr/0026-remote-clusters-and-monorepo-checkouts.md.`,
      '',
      table,
      '',
    ].join('\n');
    await writeFile(args.out!, report);
    console.log(report);
  } finally {
    await server.stop();
    await repos.dispose();
    await rm(work, { recursive: true, force: true }).catch(() => undefined);
  }
}

const s = (t: number) => ((performance.now() - t) / 1000).toFixed(1);
const mib = (b: number) => (b / (1 << 20)).toFixed(2);

await main();
