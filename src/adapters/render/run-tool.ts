import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderSandbox } from './sandbox.ts';

/**
 * The one way a render tool (kustomize, helm) runs: a subprocess that inherits nothing from the controller.
 * Its environment is built from scratch (a minimal PATH, and HOME / XDG / HELM_* / KUBECONFIG pointed at an
 * empty private directory made for this run), so no credential, token or config file of the controller
 * reaches it. It runs in its own process group, so a time limit or an output limit kills the tool and
 * anything it started. Its stderr is sanitised (controller paths removed, control characters dropped,
 * length bounded) before anyone can put it in a condition.
 */

export interface ToolRun {
  /** Absolute path of the binary. */
  bin: string;
  args: string[];
  /** Working directory: inside the (copied) checkout; '' for the run's own empty private directory. */
  cwd: string;
  /** Written to the tool's stdin (then closed); without it stdin is /dev/null. */
  stdin?: string;
  /**
   * Variables added to the scrubbed environment, e.g. SOPS_AGE_KEY: secrets go to a tool here, never on its
   * command line (which any process of the machine can read).
   */
  env?: Record<string, string>;
  timeoutMs: number;
  /** stdout beyond this many bytes kills the tool: an endless or huge render. */
  maxOutputBytes: number;
  signal?: AbortSignal;
  /**
   * Directories whose absolute paths must not reach a message: each is replaced by what it stands for
   * (e.g. the checkout → "", so paths read repo-relative).
   */
  hidePaths: { path: string; as: string }[];
  /** Also return stdout as bytes (a tool that may write binary data: sops decrypting a binary file). */
  bytes?: boolean;
  /**
   * What the tool may read besides its working directory and its private HOME (the checkout, the scratch
   * view): the kernel denies everything else (render-sandbox, docs/adr/0033).
   */
  reads?: string[];
  /**
   * TCP ports the tool may connect to (render-sandbox --connect): only a chart fetch names one (its repository's
   * port, docs/adr/0041); a render names none, so the kernel denies it every connection.
   */
  connect?: number[];
  /**
   * A private HOME made by makeToolHome and removed by its caller, for tools run in sequence that share their
   * state (a chart fetch: `helm repo update`, then `helm pull` from that index). Default: one made for this run.
   */
  home?: string;
  /** A failed run also returns its stdout, sanitised as stderr is (helm repo update says why it failed there). */
  stdoutOnFailure?: boolean;
}

export type ToolFailureKind = 'missing' | 'sandbox-missing' | 'timeout' | 'too-large' | 'exit' | 'aborted';

export type ToolOutcome =
  | { ok: true; stdout: string; /** stdout as written (binary-safe): only with ToolRun.bytes. */ bytes?: Buffer }
  | { ok: false; kind: ToolFailureKind; exitCode?: number | null; stderr: string; stdout?: string };

/** Longest stderr excerpt a message carries. */
export const MAX_STDERR_CHARS = 800;
/** stderr kept while the tool runs (the excerpt is cut from it). */
const STDERR_KEEP_BYTES = 64 << 10;

export async function runTool(run: ToolRun): Promise<ToolOutcome> {
  const home = run.home ?? (await makeToolHome());
  try {
    const cwd = run.cwd === '' ? home : run.cwd;
    return await spawnTool({ ...run, cwd }, home, { ...toolEnv(home), ...run.env }, [
      ...run.hidePaths,
      { path: home, as: '' },
    ]);
  } finally {
    if (run.home === undefined) await rm(home, { recursive: true, force: true });
  }
}

/** An empty private HOME for tool runs (see toolEnv); its maker removes it. */
export async function makeToolHome(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'packagesync-tool-'));
  await mkdir(join(home, 'config', 'helm'), { recursive: true, mode: 0o700 });
  await mkdir(join(home, 'cache'), { mode: 0o700 });
  await mkdir(join(home, 'data'), { mode: 0o700 });
  await writeFile(join(home, 'kubeconfig'), '', { mode: 0o600 });
  return home;
}

/** The whole environment of a tool: nothing is inherited. */
export function toolEnv(home: string): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_DATA_HOME: join(home, 'data'),
    HELM_CONFIG_HOME: join(home, 'config', 'helm'),
    HELM_CACHE_HOME: join(home, 'cache', 'helm'),
    HELM_DATA_HOME: join(home, 'data', 'helm'),
    HELM_PLUGINS: join(home, 'data', 'helm', 'plugins'),
    HELM_REGISTRY_CONFIG: join(home, 'config', 'helm', 'registry.json'),
    HELM_REPOSITORY_CONFIG: join(home, 'config', 'helm', 'repositories.yaml'),
    // an empty kubeconfig: `helm template` must never talk to a cluster, least of all the controller's
    KUBECONFIG: join(home, 'kubeconfig'),
    LANG: 'C',
  };
}

/** The launcher's arguments: what the tool may read and write, its memory bound, then the tool. */
export function sandboxArgs(run: ToolRun, home: string, maxMemoryBytes: number): string[] {
  const reads = [...new Set([run.cwd, ...(run.reads ?? [])])].filter((p) => p !== home);
  return [
    ...reads.flatMap((p) => ['--read', p]),
    '--write',
    home,
    ...(run.connect ?? []).flatMap((port) => ['--connect', String(port)]),
    '--memory',
    String(maxMemoryBytes),
    '--',
    run.bin,
    ...run.args,
  ];
}

function spawnTool(
  run: ToolRun,
  home: string,
  env: Record<string, string>,
  hide: { path: string; as: string }[],
): Promise<ToolOutcome> {
  const sandbox = renderSandbox();
  return new Promise((resolve) => {
    const child = spawn(sandbox.bin, sandboxArgs(run, home, sandbox.maxMemoryBytes), {
      cwd: run.cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true, // its own process group: the kill below reaches what it started
    });
    // a tool that exits without reading its input: its exit code says why
    child.stdin.on('error', () => undefined);
    child.stdin.end(run.stdin ?? '');
    const out: Buffer[] = [];
    let outBytes = 0;
    const err: Buffer[] = [];
    let errBytes = 0;
    let ended: ToolFailureKind | undefined;
    const kill = (why: ToolFailureKind) => {
      if (ended) return;
      ended = why;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => kill('timeout'), run.timeoutMs);
    const onAbort = () => kill('aborted');
    run.signal?.addEventListener('abort', onAbort, { once: true });
    if (run.signal?.aborted) onAbort();

    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > run.maxOutputBytes) return kill('too-large');
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errBytes >= STDERR_KEEP_BYTES) return;
      errBytes += chunk.length;
      err.push(chunk);
    });
    const finish = (outcome: ToolOutcome) => {
      clearTimeout(timer);
      run.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'EACCES') {
        finish({ ok: false, kind: 'sandbox-missing', stderr: '' });
      } else {
        finish({ ok: false, kind: 'exit', stderr: e.code ?? 'spawn failed' });
      }
    });
    child.on('close', (code) => {
      const stderr = sanitizeStderr(Buffer.concat(err).toString('utf8'), hide);
      if (ended) return finish({ ok: false, kind: ended, exitCode: code, stderr });
      // the launcher could not exec the tool (127 not found, 126 not executable)
      if ((code === 127 || code === 126) && /^render-sandbox: .*(not found|permission denied)/i.test(stderr))
        return finish({ ok: false, kind: 'missing', exitCode: code, stderr: '' });
      if (code !== 0)
        return finish({
          ok: false,
          kind: 'exit',
          exitCode: code,
          stderr,
          ...(run.stdoutOnFailure ? { stdout: sanitizeStderr(Buffer.concat(out).toString('utf8'), hide) } : {}),
        });
      const bytes = Buffer.concat(out);
      finish({ ok: true, stdout: bytes.toString('utf8'), ...(run.bytes ? { bytes } : {}) });
    });
  });
}

/**
 * stderr as a message may carry it: the controller's own paths (checkout, scratch dirs) replaced by what
 * they stand for, any other absolute path reduced to its last component, control characters dropped,
 * whitespace folded, bounded in length.
 */
export function sanitizeStderr(text: string, hide: { path: string; as: string }[]): string {
  let s = text;
  // longest first, so a nested directory is replaced before its parent
  for (const { path, as } of [...hide].sort((a, b) => b.path.length - a.path.length)) {
    if (path === '' || path === '/') continue;
    s = s.split(`${path}/`).join(as === '' ? '' : `${as}/`);
    s = s.split(path).join(as === '' ? '.' : as);
  }
  s = s.replace(/(^|[\s"'(=:])\/(?:[^\s"'():/]+\/)+([^\s"'():/]+)/g, '$1…/$2');
  // eslint-disable-next-line no-control-regex
  s = s.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  s = causeFirst(
    s
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== ''),
  ).join('; ');
  return s.length > MAX_STDERR_CHARS ? `${s.slice(0, MAX_STDERR_CHARS)}…` : s;
}

const LOG_NOISE = /^(INFO|DEBUG)\b|\blevel=(INFO|DEBUG)\b/;
const CAUSE = /^(Error|fatal error|panic):/i;

/**
 * The lines that say why first: a tool's `Error:` lines ahead of its log lines (helm's INFO lines filled
 * the excerpt and cut its real cause, issue 34); INFO/DEBUG log lines dropped when anything else is
 * left; a Go goroutine dump (everything from its first `goroutine N [` line) dropped.
 */
export function causeFirst(lines: string[]): string[] {
  const dump = lines.findIndex((l) => /^goroutine \d+ \[/.test(l));
  const kept = dump >= 0 ? lines.slice(0, dump) : lines;
  const quiet = kept.filter((l) => !LOG_NOISE.test(l));
  const useful = quiet.length > 0 ? quiet : kept;
  return [...useful.filter((l) => CAUSE.test(l)), ...useful.filter((l) => !CAUSE.test(l))];
}
