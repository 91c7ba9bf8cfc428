import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * Evidence of what child processes saw, for tests that prove secrets never reach a command line or an
 * environment. Two complementary views:
 *  - wrappers: `git` and `ssh` shims placed first on PATH record the full argv and environment of every
 *    invocation before exec'ing the real binary (deterministic, but only for programs found via PATH);
 *  - the process table: /proc/<pid>/cmdline and environ of every process, sampled continuously (catches
 *    git's own helpers such as git-remote-http and the askpass script, but may miss very short-lived ones).
 */

export interface SpiedProcess {
  source: 'wrapper' | 'proc';
  program: string;
  argv: string[];
  env: string[];
}

export interface ProcessSpy {
  /** Put this first on PATH for the code under test. */
  binDir: string;
  /** Starts sampling /proc until stop(). */
  startProcScan(): void;
  /** Stops sampling and returns everything seen (wrappers and /proc). */
  stop(): Promise<SpiedProcess[]>;
  dispose(): Promise<void>;
}

export async function installProcessSpy(programs: string[] = ['git', 'ssh']): Promise<ProcessSpy> {
  const dir = await mkdtemp(join(tmpdir(), 'psync-spy-'));
  const binDir = join(dir, 'bin');
  const calls = join(dir, 'calls');
  await mkdir(binDir);
  await mkdir(calls);
  for (const program of programs) {
    const real = await which(program);
    const script = [
      '#!/bin/sh',
      `f=${calls}/${program}-$$-$(date +%s%N)`,
      `printf '%s\\0' "$@" > "$f.argv"`,
      `env -0 > "$f.env"`,
      `exec ${real} "$@"`,
      '',
    ].join('\n');
    await writeFile(join(binDir, program), script);
    await chmod(join(binDir, program), 0o755);
  }

  let scanner: { worker: Worker; stop: Int32Array; done: Promise<SpiedProcess[]> } | undefined;

  return {
    binDir,
    startProcScan: () => {
      // A worker thread with synchronous reads: sampling must not starve the servers in this event loop.
      const stop = new Int32Array(new SharedArrayBuffer(4));
      const worker = new Worker(SCANNER, { eval: true, workerData: { stop, self: process.pid } });
      const done = new Promise<SpiedProcess[]>((resolve, reject) => {
        worker.once('message', (found: SpiedProcess[]) => resolve(found));
        worker.once('error', reject);
      });
      scanner = { worker, stop, done };
    },
    stop: async () => {
      const out: SpiedProcess[] = [];
      if (scanner) {
        Atomics.store(scanner.stop, 0, 1);
        out.push(...(await scanner.done));
        await scanner.worker.terminate();
        scanner = undefined;
      }
      for (const name of await readdir(calls)) {
        if (!name.endsWith('.argv')) continue;
        const base = name.slice(0, -'.argv'.length);
        const argv = splitNul(await readFile(join(calls, name)));
        const env = splitNul(await readFile(join(calls, `${base}.env`)).catch(() => Buffer.alloc(0)));
        out.push({ source: 'wrapper', program: base.split('-')[0] ?? '', argv, env });
      }
      return out;
    },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Samples /proc until the shared flag is set, then posts every distinct process it saw. */
const SCANNER = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const seen = new Map();
const split = (b) => b.toString('utf8').split('\\0').filter((s) => s !== '');
const read = (p) => { try { return fs.readFileSync(p); } catch { return Buffer.alloc(0); } };
while (Atomics.load(workerData.stop, 0) === 0) {
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\\d+$/.test(pid) || Number(pid) === workerData.self) continue;
    const cmdline = read('/proc/' + pid + '/cmdline');
    if (cmdline.length === 0) continue;
    const key = pid + ' ' + cmdline.toString('latin1');
    if (seen.has(key)) continue;
    const argv = split(cmdline);
    seen.set(key, { source: 'proc', program: argv[0] || '', argv, env: split(read('/proc/' + pid + '/environ')) });
  }
}
parentPort.postMessage([...seen.values()]);
`;

function splitNul(buf: Buffer): string[] {
  return buf
    .toString('utf8')
    .split('\0')
    .filter((s) => s !== '');
}

function which(program: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('sh', ['-c', 'command -v "$1"', 'sh', program], (err, stdout) =>
      err ? reject(new Error(`${program} not found on PATH`)) : resolve(String(stdout).trim()),
    ),
  );
}
