/**
 * `plan` on request: the page's Plan button runs `packagesync plan NAME -n NAMESPACE` itself, as a child process
 * with the viewer's own credentials (a kubeconfig that holds only their token, in a private temporary directory
 * removed when it ends), so the page shows exactly the CLI's text and the API server decides every read and dry
 * run. Its JSON form (-o json) gives the object page its diff. Bounded: two at a time per server, two minutes,
 * 4 MiB of output.
 */
import { spawn } from 'node:child_process';
import type { PlanResult } from './api-types.ts';
import { repoPath } from '../../config/repo-root.ts';

const CLI = repoPath('bin/packagesync.js');
const TIMEOUT_MS = 120_000;
const MAX_OUTPUT = 4 << 20;
const AT_ONCE = 2;

export interface PlanRequest {
  namespace: string;
  name: string;
  output: 'text' | 'json';
  /** `--kubeconfig <path>` of the viewer's credentials, or nothing for the process's own kubeconfig. */
  kubeconfigArgs: string[];
  /** The server's own plan flags (the controller's --allow-insecure-http). */
  extraArgs: readonly string[];
}

type Spawn = (args: string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>;

/**
 * One server's plans: at most two at a time for that server (a counter per server, not per process: the tests
 * and `packagesync ui` may hold several servers, and one server's busy viewers must not refuse another's).
 * `spawn` is the child process runner (tests give their own).
 */
export function planRunner(
  spawnCli: Spawn = run,
): (req: PlanRequest) => Promise<{ status: number; result: PlanResult }> {
  let running = 0;
  return async (req) => {
    if (running >= AT_ONCE)
      return { status: 429, result: { exitCode: -1, output: '', error: 'two plans are running already: try again' } };
    running++;
    try {
      const args = [
        CLI,
        'plan',
        req.name,
        '-n',
        req.namespace,
        '-o',
        req.output,
        ...req.kubeconfigArgs,
        ...req.extraArgs,
      ];
      const { code, stdout, stderr } = await spawnCli(args);
      // 0 no changes, 1 changes, 5 would fail: a plan; 2 and 3 (or a kill): it could not plan, stderr says why
      if (code === 0 || code === 1 || code === 5) return { status: 200, result: { exitCode: code, output: stdout } };
      return {
        status: 200,
        result: { exitCode: code ?? -1, output: stdout, error: stderr.trim() || `packagesync plan exited ${code}` },
      };
    } finally {
      running--;
    }
  };
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    const keep = (into: Buffer[]) => (b: Buffer) => {
      size += b.length;
      if (size > MAX_OUTPUT) child.kill('SIGKILL');
      else into.push(b);
    };
    child.stdout.on('data', keep(out));
    child.stderr.on('data', keep(err));
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString('utf8');
      resolve({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: signal
          ? `packagesync plan was stopped (${size > MAX_OUTPUT ? 'more than 4 MiB of output' : 'over two minutes'})`
          : stderr,
      });
    });
  });
}
