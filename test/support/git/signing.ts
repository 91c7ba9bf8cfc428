import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commitFiles, gitEnvForTests, type FileChange, type TestRepo } from './repo.ts';

/**
 * Signed commits and tags for spec.source.verify tests, made by the real git with a real key: an SSH key
 * from ssh-keygen (gpg.format=ssh) or a GPG key generated in a private GNUPGHOME. `secretData` is what the
 * verification Secret holds to allow this signer.
 */
export interface Signer {
  kind: 'ssh' | 'gpg';
  /** Data of a Secret that allows this signer (allowed_signers, or an armored public key). */
  secretData: Record<string, string>;
  /** git -c options that make `-S` sign with this key. */
  config: string[];
  env: NodeJS.ProcessEnv;
  dispose(): Promise<void>;
}

function run(bin: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string, input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(bin, args, { env, cwd, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${String(stderr).trim() || err.message}`));
      else resolve(String(stdout).trim());
    });
    child.stdin?.on('error', () => undefined); // a command that reads no input
    child.stdin?.end(input ?? '');
  });
}

export async function sshSigner(principal = 'tests@packagesync.invalid'): Promise<Signer> {
  const dir = await mkdtemp(join(tmpdir(), 'psync-ssh-signer-'));
  const key = join(dir, 'id_ed25519');
  const env = gitEnvForTests(dir);
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', principal, '-f', key], env);
  const pub = (await readFile(`${key}.pub`, 'utf8')).trim();
  return {
    kind: 'ssh',
    secretData: { allowed_signers: `${principal} ${pub}\n` },
    config: ['-c', 'gpg.format=ssh', '-c', `user.signingkey=${key}`],
    env,
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

export async function gpgSigner(email = 'tests@packagesync.invalid'): Promise<Signer> {
  const dir = await mkdtemp(join(tmpdir(), 'psync-gpg-'));
  const home = join(dir, 'g');
  await mkdir(home, { mode: 0o700 });
  const env = { ...gitEnvForTests(dir), GNUPGHOME: home };
  const batch = ['--batch', '--pinentry-mode', 'loopback', '--passphrase', ''];
  await run('gpg', [...batch, '--quick-gen-key', `PackageSync Tests <${email}>`, 'ed25519', 'sign', '0'], env);
  const listed = await run('gpg', ['--batch', '--with-colons', '--list-secret-keys'], env);
  const fpr = /^fpr:+([0-9A-F]{40}):/m.exec(listed)?.[1];
  if (!fpr) throw new Error('gpg made no key');
  const armored = await run('gpg', ['--batch', '--armor', '--export', fpr], env);
  return {
    kind: 'gpg',
    secretData: { 'signer.asc': `${armored}\n` },
    config: ['-c', 'gpg.format=openpgp', '-c', `user.signingkey=${fpr}`, '-c', 'gpg.program=gpg'],
    env,
    async dispose() {
      await run('gpgconf', ['--kill', 'all'], env).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const IDENTITY = ['-c', 'user.name=PackageSync Tests', '-c', 'user.email=tests@packagesync.invalid'];

/**
 * A commit on `branch` with these files, signed by `signer` (`git commit-tree -S`); the branch moves to it.
 * Without a signer, an unsigned commit (commitFiles).
 */
export async function signedCommit(
  repo: TestRepo,
  branch: string,
  files: Record<string, FileChange>,
  signer: Signer,
): Promise<string> {
  const unsigned = await commitFiles(repo, branch, files, 'signed change');
  const git = (args: string[]) => run('git', [...IDENTITY, ...signer.config, ...args], signer.env, repo.dir);
  const tree = await git(['rev-parse', `${unsigned}^{tree}`]);
  const parents = (await git(['rev-list', '--parents', '-n', '1', unsigned])).split(' ').slice(1);
  const signed = await git(['commit-tree', '-S', ...parents.flatMap((p) => ['-p', p]), '-m', 'signed change', tree]);
  await git(['update-ref', `refs/heads/${branch}`, signed]);
  return signed;
}

/** An annotated tag signed by `signer` (`git tag -s`). */
export async function signedTag(repo: TestRepo, name: string, ref: string, signer: Signer): Promise<void> {
  await run('git', [...IDENTITY, ...signer.config, 'tag', '-s', '-f', '-m', name, name, ref], signer.env, repo.dir);
}
