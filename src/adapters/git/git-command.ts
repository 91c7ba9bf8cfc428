import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleGit } from 'simple-git';
import type { SimpleGit } from 'simple-git';
import type { Failure, Result } from '../../core/failure.ts';
import { writeAuthMaterial } from './auth.ts';
import { gitFailure } from './errors.ts';
import type { GitAuth } from './auth.ts';
import type { SourceURL } from './validate.ts';

/**
 * How every git process of the source adapter starts: a clean environment built from scratch (nothing of the
 * operator's own environment but PATH, locale and proxies), an empty private HOME, hardened `-c` options,
 * and a deadline. simple-git's own guards refuse these settings unless told they are intended; each one
 * allowed below is a value this module writes itself, never one from the spec.
 */

/** Prefix of every per-operation directory: sweepStaleTemp removes leftovers after a crash. */
export const OPERATION_DIR_PREFIX = 'op-';

/** Config that neither a repository nor anything else may override (`-c` beats every config file). */
const HARDENED_CONFIG = [
  'core.hooksPath=/dev/null',
  'protocol.file.allow=never',
  'protocol.ext.allow=never',
  'core.symlinks=true',
  'submodule.recurse=false',
  'fetch.recurseSubmodules=false',
  'gc.auto=0',
  'maintenance.auto=false',
  'advice.detachedHead=false',
];

/**
 * With credentials, redirects are not followed: git would ask the askpass helper again for the new host (and
 * get the same password) and add the bearer token's http.extraHeader to every later request, wherever the
 * redirect pointed. Anonymous fetches may follow the first redirect (git's default): nothing to leak.
 */
const NO_REDIRECTS = 'http.followRedirects=false';

const ALLOWED_ENV = [
  'GIT_TERMINAL_PROMPT',
  'GIT_ALLOW_PROTOCOL',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_CEILING_DIRECTORIES',
  'GIT_ASKPASS',
  'GIT_SSH_COMMAND',
  'GIT_SSL_CAINFO',
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
];

const PASSED_THROUGH = [
  'PATH',
  'LANG',
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
];

export interface GitOperation {
  /** The operation's private directory (0700), removed when the operation ends. */
  dir: string;
  /** Everything git needs in its environment for this operation. */
  env: Record<string, string>;
  /** Secret values to scrub from any message. */
  secrets: string[];
  /** Aborts when the deadline passes or the caller cancels. */
  signal: AbortSignal;
  /** True once the deadline (not a caller cancel) aborted the signal. */
  timedOut(): boolean;
  /** The Failure for a git error of this operation: classified, with secrets scrubbed. */
  failure(err: unknown, action: string): Failure;
  /** A simple-git instance running in `cwd` with this operation's environment. */
  git(cwd?: string, extraEnv?: Record<string, string>): SimpleGit;
}

export interface OperationOptions {
  tmpRoot: string;
  source: SourceURL;
  auth: GitAuth | undefined;
  allowInsecureHttp: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Runs `fn` with a fresh private directory, auth material and a deadline; always deletes the directory (and so
 * every secret file) afterwards, whatever `fn` did.
 */
export async function withGitOperation<T>(
  opts: OperationOptions,
  fn: (op: GitOperation) => Promise<Result<T>>,
): Promise<Result<T>> {
  await mkdir(opts.tmpRoot, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(join(opts.tmpRoot, OPERATION_DIR_PREFIX));
  try {
    const home = join(dir, 'home');
    await mkdir(home, { mode: 0o700 });
    const material = await writeAuthMaterial(opts.auth, opts.source, dir, home);
    if (!material.ok) return material;
    const config = opts.auth === undefined ? HARDENED_CONFIG : [...HARDENED_CONFIG, NO_REDIRECTS];

    const deadline = AbortSignal.timeout(opts.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;
    const env: Record<string, string> = {
      ...passThrough(),
      HOME: home,
      XDG_CONFIG_HOME: home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ALLOW_PROTOCOL: opts.allowInsecureHttp ? 'https:ssh:http' : 'https:ssh',
      // Keeps git from discovering (and reading the config of) a repository above the working directory.
      GIT_CEILING_DIRECTORIES: opts.tmpRoot,
      LC_ALL: 'C',
      ...material.value.env,
    };
    const op: GitOperation = {
      dir,
      env,
      secrets: material.value.secrets,
      signal,
      timedOut: () => deadline.aborted,
      failure: (err, action) =>
        gitFailure(err, {
          action,
          url: opts.source.url,
          secrets: material.value.secrets,
          timedOut: deadline.aborted,
          timeoutMs: opts.timeoutMs,
          callerTimedOut: opts.signal?.aborted === true && isTimeout(opts.signal.reason),
        }),
      git: (cwd = dir, extraEnv = {}) =>
        simpleGit({
          baseDir: cwd,
          config,
          abort: signal,
          maxConcurrentProcesses: 1,
          allowEnvironment: ALLOWED_ENV,
          unsafe: {
            allowUnsafeHooksPath: true, // core.hooksPath=/dev/null: disables hooks
            allowUnsafeProtocolOverride: true, // protocol.*.allow=never: restricts transports
            allowUnsafeAskPass: true, // our askpass script reading 0600 files
            allowUnsafeSshCommand: true, // our ssh command pinning key and known_hosts
          },
        }).env({ ...env, ...extraEnv }),
    };
    return await fn(op);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** AbortSignal.timeout aborts with a TimeoutError; a caller's abort() with an AbortError. */
function isTimeout(reason: unknown): boolean {
  return (reason as { name?: unknown } | null)?.name === 'TimeoutError';
}

function passThrough(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return env;
}
