import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Reason } from '../../api/reasons.ts';
import { fail, ok, type Result } from '../../core/failure.ts';
import { describeAllowed, signatureKind, signerOf, type AllowedKeys } from '../../core/signers.ts';

/**
 * spec.source.verify's I/O half: the real git checks the signature of a commit (`git verify-commit`) or an
 * annotated tag (`git verify-tag`) in the cache repo, against only the keys the Secret allows: GPG public
 * keys imported into a private GNUPGHOME (trusted ultimately, so `gpg.minTrustLevel=fully` holds for them
 * alone), SSH keys in a private allowed signers file. Both live in a private temporary directory removed
 * afterwards. An SSH signature by a key outside the file is "good" to git with undefined trust: the
 * minimum trust level makes it fail. Nothing from the spec reaches a command line: the object id is a
 * validated hex id, the paths are ours.
 */

export interface VerifyRequest {
  /** The bare cache repo holding the object. */
  gitDir: string;
  /** A commit id (40 or 64 hex), or an annotated tag object id. */
  object: string;
  kind: 'commit' | 'tag';
  /** How to name the object in a message, e.g. "commit 3f2a…" or "tag v1.2.0". */
  what: string;
  keys: AllowedKeys;
  timeoutMs: number;
}

/** The cache layout (cache.ts): `<key>/checkouts/<commit>` beside `<key>/repo`. */
export function repoOfCheckout(checkoutDir: string): string {
  return join(dirname(dirname(checkoutDir)), 'repo');
}

export async function verifySignature(req: VerifyRequest): Promise<Result<void>> {
  if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(req.object)) {
    return fail(Reason.VerificationFailed, `${req.what}: not an object id`, { terminal: true });
  }
  const dir = await mkdtemp(join(tmpdir(), 'packagesync-verify-'));
  try {
    const gnupg = join(dir, 'gnupg');
    await mkdir(gnupg, { mode: 0o700 });
    const signers = join(dir, 'allowed_signers');
    await writeFile(signers, req.keys.allowedSigners, { mode: 0o600 });
    const env = {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: dir,
      GNUPGHOME: gnupg,
      GIT_DIR: req.gitDir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CEILING_DIRECTORIES: dirname(req.gitDir),
      LC_ALL: 'C',
    };
    const fingerprints = await importGpgKeys(req.keys.gpg, env, req.timeoutMs);
    if (!fingerprints.ok) return fingerprints;
    const allowed = describeAllowed(fingerprints.value, req.keys.sshFingerprints);
    if (fingerprints.value.length === 0 && req.keys.sshFingerprints.length === 0) {
      return fail(
        Reason.VerificationFailed,
        `${req.what}: the Secret in spec.source.verify.secretRef holds no key (ASCII-armored GPG public keys, or allowed_signers)`,
        { terminal: true },
      );
    }
    const raw = await run('git', ['cat-file', req.kind, req.object], env, req.timeoutMs);
    if (raw.code !== 0) return fail(Reason.VerificationFailed, `${req.what} is not in the fetched repository`);
    const kind = signatureKind(raw.stdout);
    if (kind === undefined) {
      return fail(Reason.VerificationFailed, `${req.what} is not signed; allowed keys: ${allowed}`, { terminal: true });
    }
    if (kind === 'x509') {
      return fail(Reason.VerificationFailed, `${req.what} carries an X.509 signature; only GPG and SSH are verified`, {
        terminal: true,
      });
    }
    const verb = req.kind === 'commit' ? 'verify-commit' : 'verify-tag';
    const config = [
      'core.hooksPath=/dev/null',
      `gpg.ssh.allowedSignersFile=${signers}`,
      'gpg.minTrustLevel=fully',
      'gpg.program=gpg',
      'gpg.ssh.program=ssh-keygen',
    ].flatMap((c) => ['-c', c]);
    const verified = await run('git', [...config, verb, '--raw', req.object], env, req.timeoutMs);
    if (verified.code === 0) return ok(undefined);
    const signer = signerOf(`${verified.stdout}\n${verified.stderr}`);
    const by = signer
      ? `signed by ${kind === 'ssh' ? 'SSH' : 'GPG'} key ${signer}, which is not allowed`
      : `not signed by an allowed ${kind === 'ssh' ? 'SSH' : 'GPG'} key (or the signature is bad)`;
    return fail(Reason.VerificationFailed, `${req.what} is ${by}; allowed keys: ${allowed}`, { terminal: true });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Imports the armored keys and trusts them ultimately; their fingerprints. Keys go in on stdin. */
async function importGpgKeys(
  keys: readonly string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<Result<string[]>> {
  if (keys.length === 0) return ok([]);
  const base = ['--batch', '--no-tty', '--quiet', '--no-autostart'];
  const imported = await run('gpg', [...base, '--import'], env, timeoutMs, keys.join('\n'));
  if (imported.code !== 0) {
    return fail(
      Reason.VerificationFailed,
      'the GPG public keys in the Secret named by spec.source.verify.secretRef cannot be imported (not ASCII-armored public keys?)',
      { terminal: true },
    );
  }
  const listed = await run('gpg', [...base, '--with-colons', '--list-keys'], env, timeoutMs);
  // the fingerprint of each primary key: the fpr line right after its pub line
  const fingerprints: string[] = [];
  let primary = false;
  for (const line of listed.stdout.split('\n')) {
    const f = line.split(':');
    if (f[0] === 'pub') primary = true;
    else if (f[0] === 'fpr' && primary) {
      fingerprints.push(f[9] ?? '');
      primary = false;
    } else if (f[0] === 'sub') primary = false;
  }
  const trust = fingerprints.map((fpr) => `${fpr}:6:\n`).join('');
  await run('gpg', [...base, '--import-ownertrust'], env, timeoutMs, trust);
  return ok(fingerprints.filter((f) => f !== ''));
}

function run(
  bin: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
  stdin?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(bin, args, { env, timeout: timeoutMs, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      const code = err
        ? typeof (err as { code?: unknown }).code === 'number'
          ? (err as { code: number }).code
          : 1
        : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(stdin ?? '');
  });
}
