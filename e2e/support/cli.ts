/** Runs the `packagesync` CLI as a user would (bin/packagesync.js), against the test cluster. */
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { kubeconfig } from './cluster.ts';

const bin = resolve(import.meta.dirname, '../../bin/packagesync.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `packagesync ARGS --kubeconfig <the suite's>`; never throws on a non-zero exit. */
export function packagesync(...args: string[]): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [bin, ...args, '--kubeconfig', kubeconfig()],
      { maxBuffer: 16 << 20, timeout: 170_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** A package directory on disk; write() replaces its files (null deletes one). */
export async function packageDir(files: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), 'psync-cli-'));
  const write = async (changes: Record<string, string | null>) => {
    for (const [path, content] of Object.entries(changes)) {
      const full = join(dir, path);
      if (content === null) await rm(full, { force: true });
      else {
        await mkdir(dirname(full), { recursive: true });
        await writeFile(full, content);
      }
    }
  };
  await write(files);
  return { dir, write, dispose: () => rm(dir, { recursive: true, force: true }) };
}
