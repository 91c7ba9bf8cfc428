import { Reason } from '../../api/reasons.ts';
import { errorText, type Failure } from '../../core/failure.ts';

/**
 * Turns a failed git process into a Failure a user can act on, and makes sure no secret survives into it:
 * known secret values (and their URL-encoded and base64 forms) are masked, lines that echo credentials or
 * URLs with userinfo are dropped, and the remaining stderr is cut short.
 */

export interface GitFailureContext {
  /** What we were doing, for the message: "listing refs of", "fetching commit abc from". */
  action: string;
  url: string;
  secrets: readonly string[];
  timedOut: boolean;
  timeoutMs: number;
  /** The caller's signal ended by a deadline of its own (the reconcile's spec.timeout), not a cancel. */
  callerTimedOut?: boolean;
}

const MAX_DETAIL = 300;

const AUTH_PATTERNS = [
  /Authentication failed/i,
  /could not read (Username|Password)/i,
  /terminal prompts disabled/i,
  /returned error: 40[13]/i,
  /HTTP 40[13]/,
  /Permission denied \(/,
  /invalid credentials/i,
];
const HOST_KEY_PATTERNS = [
  /Host key verification failed/i,
  /REMOTE HOST IDENTIFICATION HAS CHANGED/i,
  /No \S+ host key is known/i,
];
const BAD_KEY_PATTERNS = [/Load key .*: (invalid format|error in libcrypto)/i, /no pubkey loaded/i];
const MISSING_OBJECT_PATTERNS = [
  /not our ref/i,
  /couldn't find remote ref/i,
  /unadvertised object/i,
  /no such remote ref/i,
];
const NOT_FOUND_PATTERNS = [
  /repository .* not found/i,
  /returned error: 404/i,
  /does not appear to be a git repository/i,
];
/** With credentials git follows no redirect (git-command.ts): the server's answer is the 3xx itself. */
const REDIRECT_PATTERNS = [/returned error: 30[12378]\b/];
const UNREACHABLE_PATTERNS = [
  /Could not resolve host/i,
  /Connection refused/i,
  /Failed to connect/i,
  /Connection timed out/i,
  /Connection reset/i,
  /Could not read from remote repository/i,
];

export function gitFailure(err: unknown, ctx: GitFailureContext): Failure {
  const raw = errorText(err);
  const where = `${ctx.action} ${ctx.url}`;
  if (ctx.timedOut)
    return failure(Reason.SourceTimeout, `timed out after ${Math.round(ctx.timeoutMs / 1000)}s ${where}`);
  if (ctx.callerTimedOut) {
    return failure(Reason.SourceTimeout, `timed out ${where}: the reconcile's deadline (spec.timeout) passed first`);
  }
  if (/abort/i.test(pluginOf(err))) return failure(Reason.FetchFailed, `cancelled ${where}`);
  if (HOST_KEY_PATTERNS.some((p) => p.test(raw))) {
    return failure(
      Reason.AuthenticationFailed,
      `ssh host key verification failed ${where}: known_hosts in the secret does not match the server`,
    );
  }
  if (BAD_KEY_PATTERNS.some((p) => p.test(raw))) {
    return failure(
      Reason.InvalidAuthSecret,
      `ssh could not load the identity from the secret ${where} (is it a valid, passphrase-less private key?)`,
      true,
    );
  }
  if (AUTH_PATTERNS.some((p) => p.test(raw))) {
    return failure(
      Reason.AuthenticationFailed,
      `authentication failed ${where}: check the credentials in the secret named by secretRef`,
    );
  }
  if (REDIRECT_PATTERNS.some((p) => p.test(raw))) {
    return failure(
      Reason.FetchFailed,
      `the git server answered with a redirect ${where}; credentials are never sent where a redirect points: ` +
        "set spec.source.url to the repository's final URL",
    );
  }
  if (MISSING_OBJECT_PATTERNS.some((p) => p.test(raw))) {
    return failure(Reason.RefNotFound, `the remote does not have it: ${where}`);
  }
  if (NOT_FOUND_PATTERNS.some((p) => p.test(raw))) {
    return failure(Reason.FetchFailed, `repository not found ${where}`);
  }
  const detail = scrubGitOutput(raw, ctx.secrets);
  const prefix = UNREACHABLE_PATTERNS.some((p) => p.test(raw)) ? 'cannot reach the git server' : 'git failed';
  return failure(Reason.FetchFailed, `${prefix} ${where}${detail ? `: ${detail}` : ''}`);
}

/**
 * Masks every secret form and drops lines that could carry one. Exported for tests and for any caller that
 * must show git output.
 */
export function scrubGitOutput(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const form of secretForms(secrets)) out = out.split(form).join('***');
  const lines = out
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '')
    // A URL with userinfo (user:pass@) or an Authorization header: drop the whole line.
    .filter((l) => !/[a-z][a-z0-9+.-]*:\/\/[^\s/@]*:[^\s/@]*@/i.test(l) && !/authorization|bearer/i.test(l))
    .map((l) => l.replace(/^(fatal|error|remote|warning): /i, ''))
    // eslint-disable-next-line no-control-regex
    .map((l) => l.replace(/[\u0000-\u001f\u007f]/g, ''));
  const joined = lines.slice(0, 3).join('; ');
  return joined.length > MAX_DETAIL ? `${joined.slice(0, MAX_DETAIL)}…` : joined;
}

function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const s of secrets) {
    if (!s) continue;
    forms.add(s);
    forms.add(encodeURIComponent(s));
    forms.add(Buffer.from(s).toString('base64'));
    // Multi-line secrets (keys): any one line of them is just as secret.
    for (const line of s.split('\n')) if (line.trim().length >= 16) forms.add(line.trim());
  }
  // Longest first, so a secret containing another is masked whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

function pluginOf(err: unknown): string {
  const plugin = (err as { plugin?: unknown } | null)?.plugin;
  return typeof plugin === 'string' ? plugin : '';
}

function failure(reason: string, message: string, terminal = false): Failure {
  return { reason, message, terminal };
}

/** Only the error's class and code: an unexpected error's message could quote a path or a value. */
export function errorName(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const name = err instanceof Error ? err.name : 'error';
  return typeof code === 'string' ? `${name} ${code}` : name;
}
